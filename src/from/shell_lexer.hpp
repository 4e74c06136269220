#pragma once
// The words and commands of a shell script, as written: quotes, $( ), ${ } and backquotes kept
// whole, '\' continuations joined, comments dropped, NAME=( ... ) arrays read across lines. Nothing
// is expanded or run here (from/shell_script.cpp evaluates). Pure text in.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace ridgeline::shell {

// One word as written (quotes and expansions kept), or an array assignment NAME=( items ).
struct RawWord {
    std::string text;
    bool array = false;  // text is "NAME=" or "NAME+="; items are the elements as written
    std::vector<std::string> items;
};

// A here-document (<<EOF ... EOF): the lines up to its delimiter, given to the command's input.
struct HereDoc {
    std::string body;
    std::size_t line = 0;  // of the body's first line
};

// A simple command and what joins it to the one before ("" for a new line or ';', "&&", "||", "|").
struct ShellCommand {
    std::vector<RawWord> words;  // without the here-document's << and delimiter
    std::size_t line = 0;
    std::string joined_by;
    std::optional<HereDoc> here_doc;
};

// "line N", and an InputError naming the file and that line.
[[nodiscard]] std::string at(std::size_t line);
[[nodiscard]] InputError line_error(const std::string& file, std::size_t line, const std::string& why);
constexpr int kMaxNesting = 64;  // quotes, $( ), ${ } inside each other: deeper is refused, not a stack overflow

// Counts one level of nesting for as long as it lives.
struct Nesting {
    Nesting(int& depth, const std::string& file, std::size_t line) : depth_(depth) {
        if (++depth_ > kMaxNesting) {
            --depth_;
            throw line_error(file, line, "quotes and expansions nested more than " + std::to_string(kMaxNesting) + " deep");
        }
    }
    ~Nesting() { --depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    int& depth_;
};

// A shell variable name's first character, and the rest.
[[nodiscard]] bool is_name_start(char c);
[[nodiscard]] bool is_name_char(char c);

// The commands of `text` (its first line numbered `first_line`). InputError naming `file` and the
// line for an unclosed quote, bracket or array, or nesting deeper than kMaxNesting.
[[nodiscard]] std::vector<ShellCommand> lex(const std::string& text, const std::string& file, std::size_t first_line);

}  // namespace ridgeline::shell
