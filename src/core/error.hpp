#pragma once
// Errors that are the user's to fix (bad files, bad flags). The CLI maps them to exit code 2;
// anything else escaping to main is an internal error (exit code 1).
#include <stdexcept>
#include <string>

namespace ridgeline {

class InputError : public std::runtime_error {
public:
    // origin: a file path or a flag such as "--chips"; field: a dotted path inside it (may be empty).
    InputError(std::string origin, std::string field, const std::string& what)
        : std::runtime_error(compose(origin, field, what)),
          origin_(std::move(origin)), field_(std::move(field)) {}

    [[nodiscard]] const std::string& origin() const { return origin_; }
    [[nodiscard]] const std::string& field() const { return field_; }

private:
    static std::string compose(const std::string& origin, const std::string& field,
                               const std::string& what) {
        std::string message = origin;
        if (!field.empty()) message += ": field '" + field + "'";
        return message + ": " + what;
    }
    std::string origin_;
    std::string field_;
};

}  // namespace ridgeline
