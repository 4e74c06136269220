#include "cli/numeric_flags.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace ridgeline::cli {

namespace {

std::string lowered(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

// "" when `text` is a number people mean, else why not (quoting at most 40 characters of it).
std::string refuse_numeric_text(const std::string& text) {
    const std::string quoted = "\"" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "\"";
    std::string body = lowered(text);
    if (!body.empty() && (body.front() == '+' || body.front() == '-')) body.erase(0, 1);
    if (body.rfind("nan", 0) == 0 || body.rfind("inf", 0) == 0) return "expected a finite number (not NaN, not an infinity)";
    const bool digits = !body.empty() && std::all_of(body.begin(), body.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (digits && body.size() > 1 && body.front() == '0')
        return "a whole number with a leading zero (" + quoted + ") is ambiguous (octal?): write it without the zero";
    return "";
}

}  // namespace

void check_numeric_flags(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        // An empty value ("--placement ''") is never what a flag that takes one means.
        if (option->get_items_expected_min() >= 1)
            option->check(CLI::Validator([](const std::string& text) { return text.empty() ? std::string("expected a value, found an empty one") : std::string(); },
                                         "", "non-empty"));
        const std::string type = option->get_type_name();
        if (type.find("FLOAT") == std::string::npos && type.find("INT") == std::string::npos) continue;
        option->check(CLI::Validator(refuse_numeric_text, "", "finite"));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) check_numeric_flags(*sub);
}

}  // namespace ridgeline::cli
