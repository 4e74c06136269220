#pragma once
// One error line, whatever a hostile value holds: control characters are written as escapes (a newline
// in a model name must not forge a second line) and any word or quoted value past kMaxQuotedChars
// keeps its start and says how long it was (a 50 MB name is not echoed whole); the first word, the
// file or flag the error is about, is kept up to a path's length.
#include <cstddef>
#include <string>
#include <string_view>

namespace ridgeline {

inline constexpr std::size_t kMaxQuotedChars = 160;
inline constexpr std::size_t kMaxPathChars = 4096;  // PATH_MAX: the file an error names stays whole

[[nodiscard]] std::string clip_error_line(std::string_view message);

}  // namespace ridgeline
