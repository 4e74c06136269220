#pragma once
// Quantities as users type them on the command line: "1GiB", "512MB", "4e9", "1.5 TB".
#include <string>

namespace ridgeline::io {

// Bytes with an optional decimal (kB, MB, GB, TB) or binary (KiB, MiB, GiB, TiB) suffix.
// InputError naming `flag` for anything else, a negative or a non-finite value.
[[nodiscard]] double parse_bytes(const std::string& text, const std::string& flag);

}  // namespace ridgeline::io
