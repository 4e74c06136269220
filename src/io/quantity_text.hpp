#pragma once
// Quantities as users type them on the command line: "1GiB", "512MB", "4e9", "1.5 TB".
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ridgeline::io {

// A whole number in 1..max written in full ("8", not "8x" or "8.5"); nullopt otherwise.
[[nodiscard]] std::optional<std::int64_t> parse_positive_whole(const std::string& text, std::int64_t max);

// "4x4x8" -> {4, 4, 8}: 1 to 4 axes; InputError naming `flag` when malformed.
[[nodiscard]] std::vector<std::int64_t> parse_torus_shape(const std::string& text, const std::string& flag);

// Bytes with an optional decimal (kB, MB, GB, TB) or binary (KiB, MiB, GiB, TiB) suffix:
// parse_quantity for a size.
[[nodiscard]] double parse_bytes(const std::string& text, const std::string& flag);

// The number a text starts with (std::stod's reading) and how many characters it takes; 0 when
// it starts with none.
struct LeadingNumber {
    double value = 0;
    std::size_t used = 0;
};
[[nodiscard]] LeadingNumber leading_number(const std::string& text);

// What a typed value measures, for values whose unit the user writes ("4.8TB/s", "1.5us").
enum class Quantity { bandwidth, bytes, seconds, flops_per_s, usd_per_hour, watts, plain };
[[nodiscard]] const char* quantity_name(Quantity quantity);  // "a bandwidth (B/s)", ...

// A positive finite number with an optional unit of `quantity`: SI prefixes (k, M, G, T, P) on
// B/s, b/s (bits), FLOP/s and W; B, kB ... TB and KiB ... TiB for bytes; s, ms, us, ns; "$" or
// "USD/h" for prices. A bare number is in the base unit. InputError naming `flag` for a unit of
// another quantity (saying which), an unknown unit, or a value that is not positive and finite.
[[nodiscard]] double parse_quantity(const std::string& text, Quantity quantity, const std::string& flag);

// "tensor,data" -> {"tensor", "data"}.
[[nodiscard]] std::vector<std::string> split_list(const std::string& text);
// "64" -> {64}; "1..512" -> the powers of two from 1 to 512 ({8, 16, 32} for "8..32"; a range whose
// ends are not powers of two keeps its ends too); "4096..8192:512" -> every 512th from 4096 to 8192
// (the step must divide the span). InputError naming `flag` when malformed.
[[nodiscard]] std::vector<std::int64_t> parse_count_range(const std::string& text, const std::string& flag, std::int64_t max,
                                                          std::int64_t max_values = 100'000);

}  // namespace ridgeline::io
