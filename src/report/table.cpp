#include "report/table.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace ridgeline::report {

std::string Table::render() const {
    std::vector<std::size_t> widths(headers_.size(), 0);
    for (std::size_t c = 0; c < headers_.size(); ++c) widths[c] = headers_[c].size();
    for (const auto& row : rows_)
        for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    const auto line = [&](const std::vector<std::string>& cells) {
        std::string text;
        for (std::size_t c = 0; c < widths.size(); ++c) {
            const std::string cell = c < cells.size() ? cells[c] : "";
            // First column left-aligned (labels), the rest right-aligned (numbers).
            const std::string pad(widths[c] - cell.size(), ' ');
            text += (c == 0 ? cell + pad : pad + cell) + (c + 1 < widths.size() ? "  " : "");
        }
        return text + "\n";
    };
    std::string text = line(headers_);
    std::size_t total = 0;
    for (auto w : widths) total += w + 2;
    text += std::string(total > 2 ? total - 2 : 0, '-') + "\n";
    for (const auto& row : rows_) text += line(row);
    return text;
}

std::string fixed(double value, int decimals) {
    std::array<char, 64> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.*f", decimals, value);
    return buffer.data();
}

std::string si(double value, const std::string& unit) {
    static constexpr std::array<const char*, 7> prefixes = {"", "K", "M", "G", "T", "P", "E"};
    std::size_t index = 0;
    double scaled = value;
    while (std::fabs(scaled) >= 1000.0 && index + 1 < prefixes.size()) {
        scaled /= 1000.0;
        ++index;
    }
    const int decimals = std::fabs(scaled) >= 100 ? 1 : (std::fabs(scaled) >= 10 ? 2 : 3);
    return fixed(scaled, decimals) + " " + prefixes[index] + unit;
}

std::string seconds(double value_s) {
    const double magnitude = std::fabs(value_s);
    if (magnitude >= 1.0 || magnitude == 0.0) return fixed(value_s, 3) + " s";
    if (magnitude >= 1e-3) return fixed(value_s * 1e3, 3) + " ms";
    if (magnitude >= 1e-6) return fixed(value_s * 1e6, 3) + " us";
    return fixed(value_s * 1e9, 3) + " ns";
}

std::string no_price_text(const std::string& chip) {
    return "none: no price for " + chip + " (give --price USD per chip-hour)";
}

}  // namespace ridgeline::report
