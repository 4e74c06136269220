#pragma once
// Errors that are the user's to fix (bad files, bad requests). The CLI maps them to exit code 2;
// anything else escaping to main is an internal error (exit code 1). Below the CLI, an error in
// what was asked names the request's field (origin kRequest, field "tp" or "placement.foo"); only
// the CLI knows which flag set it.
#include <stdexcept>
#include <string>

namespace ridgeline {

inline constexpr const char* kRequest = "request";

class InputError : public std::runtime_error {
public:
    // origin: a file path, a flag such as "--chips", or kRequest; field: a dotted path inside it (may be empty).
    InputError(std::string origin, std::string field, const std::string& what)
        : std::runtime_error(compose(origin, field, what)),
          origin_(std::move(origin)), field_(std::move(field)), detail_(what) {}

    [[nodiscard]] const std::string& origin() const { return origin_; }
    [[nodiscard]] const std::string& field() const { return field_; }
    [[nodiscard]] const std::string& detail() const { return detail_; }

private:
    static std::string compose(const std::string& origin, const std::string& field,
                               const std::string& what) {
        std::string message = origin;
        if (!field.empty()) message += ": field '" + field + "'";
        return message + ": " + what;
    }
    std::string origin_;
    std::string field_;
    std::string detail_;
};

}  // namespace ridgeline
