#include "io/quantity_text.hpp"

#include <cctype>
#include <cmath>
#include <sstream>
#include <utility>

#include "core/error.hpp"

namespace ridgeline::io {

std::optional<std::int64_t> parse_positive_whole(const std::string& text, std::int64_t max) {
    std::size_t used = 0;
    long long value = 0;
    try {
        value = std::stoll(text, &used);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (used == 0 || used != text.size() || value < 1 || value > max) return std::nullopt;
    return value;
}

std::vector<std::int64_t> parse_torus_shape(const std::string& text, const std::string& flag) {
    std::vector<std::int64_t> dims;
    std::stringstream stream(text);
    std::string part;
    while (std::getline(stream, part, 'x')) {
        const auto value = parse_positive_whole(part, 1'000'000);
        if (!value) throw InputError(flag, "", "expected a torus shape such as 4x4x8, found \"" + text + "\"");
        dims.push_back(*value);
    }
    if (dims.empty() || dims.size() > 4)
        throw InputError(flag, "", "expected a torus shape of 1 to 4 axes such as 4x4x8, found \"" + text + "\"");
    return dims;
}

double parse_bytes(const std::string& text, const std::string& flag) { return parse_quantity(text, Quantity::bytes, flag); }

const char* quantity_name(Quantity quantity) {
    switch (quantity) {
        case Quantity::bandwidth: return "a bandwidth (B/s)";
        case Quantity::bytes: return "a size (B)";
        case Quantity::seconds: return "a time (s)";
        case Quantity::flops_per_s: return "an arithmetic rate (FLOP/s)";
        case Quantity::usd_per_hour: return "a price (USD per chip-hour)";
        case Quantity::watts: return "a power (W)";
        case Quantity::plain: return "a plain number";
    }
    return "a number";
}

namespace {

struct Unit {
    std::string suffix;
    Quantity quantity;
    double scale;
};

// Every unit of every quantity, so that a unit of the wrong kind is named as such.
const std::vector<Unit>& units() {
    static const std::vector<Unit> table = [] {
        std::vector<Unit> t;
        const std::pair<const char*, double> prefixes[] = {{"", 1.0}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
        for (const auto& [prefix, scale] : prefixes) {
            const std::string p = prefix;
            for (const char* unit : {"B/s", "Bps"}) t.push_back({p + unit, Quantity::bandwidth, scale});
            for (const char* unit : {"b/s", "bit/s", "bps"}) t.push_back({p + unit, Quantity::bandwidth, scale / 8.0});
            for (const char* unit : {"FLOP/s", "FLOPS", "flop/s"}) t.push_back({p + unit, Quantity::flops_per_s, scale});
            t.push_back({p + "W", Quantity::watts, scale});
            if (!p.empty() && p != "K") t.push_back({p + "B", Quantity::bytes, scale});
        }
        t.push_back({"B", Quantity::bytes, 1.0});
        t.push_back({"KB", Quantity::bytes, 1e3});
        for (const auto& [unit, scale] : {std::pair{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}})
            t.push_back({unit, Quantity::bytes, scale});
        for (const auto& [unit, scale] : {std::pair{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}})
            t.push_back({unit, Quantity::seconds, scale});
        for (const char* unit : {"USD/h", "$/h", "USD"}) t.push_back({unit, Quantity::usd_per_hour, 1.0});
        return t;
    }();
    return table;
}

}  // namespace

LeadingNumber leading_number(const std::string& text) {
    LeadingNumber number;
    try {
        number.value = std::stod(text, &number.used);
    } catch (const std::exception&) {
        number.used = 0;
    }
    return number;
}

double parse_quantity(const std::string& text, Quantity quantity, const std::string& flag) {
    std::string body = text;
    bool dollar = false;
    if (!body.empty() && body.front() == '$') {
        dollar = true;
        body.erase(0, 1);
    }
    const auto [value, used] = leading_number(body);
    std::string suffix = used > 0 ? body.substr(used) : "";
    while (!suffix.empty() && std::isspace(static_cast<unsigned char>(suffix.front()))) suffix.erase(0, 1);
    if (dollar && (suffix.empty() || suffix == "/h")) suffix = "USD/h";
    const std::string expected = std::string("expected ") + quantity_name(quantity);
    if (used == 0 || !std::isfinite(value) || value <= 0)
        throw InputError(flag, "", expected + " > 0, found \"" + text + "\"");
    if (suffix.empty()) return value;
    for (const Unit& unit : units()) {
        if (unit.suffix != suffix) continue;
        if (unit.quantity != quantity)
            throw InputError(flag, "", "\"" + text + "\" is " + quantity_name(unit.quantity) + "; " + expected);
        return value * unit.scale;
    }
    throw InputError(flag, "", expected + ", found the unknown unit \"" + suffix + "\" in \"" + text + "\"");
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ',')) items.push_back(item);
    return items;
}

std::vector<std::int64_t> parse_count_range(const std::string& text, const std::string& flag, std::int64_t max, std::int64_t max_values) {
    const auto bad = [&] {
        return InputError(flag, "", "expected a whole number or a range such as 1..512, found \"" + text + "\"");
    };
    const std::size_t dots = text.find("..");
    if (dots == std::string::npos) {
        const auto value = parse_positive_whole(text, max);
        if (!value) throw bad();
        return {*value};
    }
    const std::size_t colon = text.find(':', dots);
    const auto low = parse_positive_whole(text.substr(0, dots), max);
    const auto high = parse_positive_whole(text.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2), max);
    if (!low || !high || *low > *high) throw bad();
    if (colon != std::string::npos) {
        const auto step = parse_positive_whole(text.substr(colon + 1), max);
        if (!step) throw InputError(flag, "", "expected a whole step after ':' such as 4096..8192:512, found \"" + text + "\"");
        if ((*high - *low) % *step != 0)
            throw InputError(flag, "", "the step " + std::to_string(*step) + " does not divide the range " + std::to_string(*low) + ".." +
                                           std::to_string(*high) + " (" + std::to_string(*high - *low) + " apart)");
        if ((*high - *low) / *step >= max_values)
            throw InputError(flag, "", "more than " + std::to_string(max_values) + " values in \"" + text + "\"" +
                                           (max_values < 100'000 ? ": each is a search of its own, give a coarser step" : ""));
        std::vector<std::int64_t> values;
        for (std::int64_t value = *low; value <= *high; value += *step) values.push_back(value);
        return values;
    }
    std::vector<std::int64_t> values = {*low};
    std::int64_t power = 1;
    while (power <= *low) power *= 2;
    for (; power < *high; power *= 2) values.push_back(power);
    if (*high != *low) values.push_back(*high);
    return values;
}

}  // namespace ridgeline::io
