#pragma once
// One error line, whatever a hostile value holds: control characters are written as escapes (a newline
// in a model name must not forge a second line) and any word or quoted value past kMaxQuotedChars
// keeps its start and says how long it was (a 50 MB name is not echoed whole).
#include <cstddef>
#include <string>
#include <string_view>

namespace ridgeline {

inline constexpr std::size_t kMaxQuotedChars = 160;

[[nodiscard]] std::string clip_error_line(std::string_view message);

}  // namespace ridgeline
