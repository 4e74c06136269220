#include "core/clip.hpp"

#include <algorithm>
#include <cstdio>

namespace ridgeline {

namespace {

void append_escaped(std::string& out, char c) {
    switch (c) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
        default: break;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += code;
        return;
    }
    out += c;
}

// A run ends at a space, or at its closing quote when it opened with one.
void append_run(std::string& out, std::string_view run, std::size_t limit) {
    if (run.size() <= limit) {
        for (char c : run) append_escaped(out, c);
        return;
    }
    std::size_t keep = limit - 40;
    // Never cut a UTF-8 character in two.
    while (keep > 0 && (static_cast<unsigned char>(run[keep]) & 0xC0) == 0x80) --keep;
    for (char c : run.substr(0, keep)) append_escaped(out, c);
    out += "...(" + std::to_string(run.size()) + " bytes)";
    if (run.back() == '"') out += '"';
}

}  // namespace

std::string clip_error_line(std::string_view message) {
    while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
    std::string out;
    out.reserve(std::min<std::size_t>(message.size(), 4096));
    std::size_t i = 0;
    while (i < message.size()) {
        if (message[i] == ' ') {
            out += ' ';
            ++i;
            continue;
        }
        std::size_t end = i;
        if (message[i] == '"') {
            const std::size_t close = message.find('"', i + 1);
            end = close == std::string_view::npos ? message.size() : close + 1;
        } else {
            while (end < message.size() && message[end] != ' ') ++end;
        }
        // The first run is the file (or flag) the error is about: named whole, up to a path's length.
        append_run(out, message.substr(i, end - i), i == 0 ? kMaxPathChars : kMaxQuotedChars);
        i = end;
    }
    return out;
}

}  // namespace ridgeline
