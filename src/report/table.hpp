#pragma once
// Plain-text tables and human-readable numbers for the terminal face of a report.
#include <string>
#include <vector>

namespace ridgeline::report {

class Table {
public:
    explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
    void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
    [[nodiscard]] std::string render() const;

private:
    std::vector<std::string> headers_;
    std::vector<std::vector<std::string>> rows_;
};

// 70.55 B, 1.23 T ... with `unit` appended ("FLOP", "B" for bytes uses decimal prefixes).
[[nodiscard]] std::string si(double value, const std::string& unit = "");
[[nodiscard]] std::string seconds(double value_s);
[[nodiscard]] std::string fixed(double value, int decimals);
// Where a cost would go for a chip whose file gives no price, and how to give one.
[[nodiscard]] std::string no_price_text(const std::string& chip);

}  // namespace ridgeline::report
