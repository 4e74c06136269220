#pragma once
// Writing a result file so that an existing file is only ever replaced by a complete, checked one.
#include <filesystem>
#include <functional>
#include <string>

namespace ridgeline::io {

// Writes `text` to a new temporary file beside `path` (an unpredictable name, created exclusively,
// so a planted link is never followed), flushes it to disk, runs `check` on it (which throws to
// refuse it), and only then renames it over `path`. InputError naming `path` and the real cause
// when any step fails; the temporary file never outlives the call.
void write_file_atomically(const std::filesystem::path& path, const std::string& text,
                           const std::function<void(const std::filesystem::path&)>& check = {});

}  // namespace ridgeline::io
