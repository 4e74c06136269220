#include "from/shell_lexer.hpp"

#include <algorithm>
#include <cctype>

namespace ridgeline::shell {

std::string at(std::size_t line) { return "line " + std::to_string(line); }
InputError line_error(const std::string& file, std::size_t line, const std::string& why) { return InputError(file, at(line), why); }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

namespace {

class Lexer {
public:
    Lexer(const std::string& text, const std::string& file, std::size_t first_line) : t_(text), file_(file), line_(first_line) {}

    std::vector<ShellCommand> commands() {
        std::vector<ShellCommand> out;
        ShellCommand cur{{}, line_, "", std::nullopt};
        std::string next_join;
        const auto finish = [&](const std::string& join) {
            if (!cur.words.empty()) out.push_back(cur);
            cur = ShellCommand{{}, line_, join, std::nullopt};
        };
        while (i_ < t_.size()) {
            if (skip_line_continuation()) continue;
            const char c = t_[i_];
            if (c == ' ' || c == '\t' || c == '\r') {
                ++i_;
                continue;
            }
            if (c == '#') {
                while (i_ < t_.size() && t_[i_] != '\n') ++i_;
                continue;
            }
            if (c == '\n' || c == ';') {
                if (c == '\n') ++line_;
                ++i_;
                if (c == '\n' && !delimiter_.empty()) {
                    HereDoc doc = here_doc_body();
                    (owner_ < out.size() ? out[owner_] : cur).here_doc = std::move(doc);  // cmd <<EOF | sh: cmd's
                }
                finish("");
                continue;
            }
            if ((c == '&' || c == '|') && peek(1) == c) {
                i_ += 2;
                finish(std::string(2, c));
                continue;
            }
            if (c == '|' || c == '&') {
                ++i_;
                finish(c == '|' ? "|" : "");
                continue;
            }
            if (cur.words.empty()) cur.line = line_;
            RawWord w = word();
            // <<EOF, << 'EOF', <<-EOF: the body starts on the next line (<<< is a string, not a document).
            if (w.text.starts_with("<<") && !w.text.starts_with("<<<")) {
                if (!delimiter_.empty()) fail(line_, "two here-documents on one command");
                strip_tabs_ = w.text.starts_with("<<-");
                std::string tag = w.text.substr(strip_tabs_ ? 3 : 2);
                if (tag.empty()) {
                    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
                    tag = word().text;
                }
                std::erase_if(tag, [](char q) { return q == '\'' || q == '"' || q == '\\'; });
                if (tag.empty()) fail(line_, "a here-document (<<) without its delimiter word");
                delimiter_ = tag;
                owner_ = out.size();
                continue;
            }
            cur.words.push_back(std::move(w));
        }
        if (!delimiter_.empty()) fail(cur.line, "a here-document (<<" + delimiter_ + ") has no body");
        finish("");
        return out;
    }

private:
    char peek(std::size_t ahead) const { return i_ + ahead < t_.size() ? t_[i_ + ahead] : '\0'; }
    // A backslash before a newline joins the lines: both are dropped. bash drops one that ends the
    // file as well (MaxText's configs/experimental/*.sh end so).
    bool skip_line_continuation() {
        if (t_[i_] != '\\') return false;
        if (i_ + 1 == t_.size()) {
            ++i_;
            return true;
        }
        if (peek(1) != '\n') return false;
        i_ += 2;
        ++line_;
        return true;
    }

    [[noreturn]] void fail(std::size_t line, const std::string& what) const { throw line_error(file_, line, what); }

    // The lines from i_ to the delimiter's own line (or the end, as bash reads an unclosed one).
    HereDoc here_doc_body() {
        HereDoc doc{"", line_};
        while (i_ < t_.size()) {
            std::size_t end = t_.find('\n', i_);
            if (end == std::string::npos) end = t_.size();
            std::string text = t_.substr(i_, end - i_);
            i_ = std::min(end + 1, t_.size());
            ++line_;
            if (strip_tabs_) text.erase(0, text.find_first_not_of('\t') == std::string::npos ? text.size() : text.find_first_not_of('\t'));
            if (text == delimiter_ || (!text.empty() && text.back() == '\r' && text.substr(0, text.size() - 1) == delimiter_)) break;
            doc.body += text + "\n";
        }
        delimiter_.clear();
        return doc;
    }

    // Copies a quoted or bracketed span starting at i_ into `out`, nested spans included.
    void span(std::string& out) {
        const std::size_t start_line = line_;
        const Nesting nested(nesting_, file_, start_line);
        const char open = t_[i_];
        // '...' and `...`: nothing inside is special, to the next of the same mark.
        if (open == '\'' || open == '`') {
            const std::size_t close = t_.find(open, i_ + 1);
            if (close == std::string::npos) fail(start_line, open == '`' ? "a backquote (`) is not closed" : "a quote (') is not closed");
            count_lines(i_, close);
            out += t_.substr(i_, close + 1 - i_);
            i_ = close + 1;
            return;
        }
        // "...", $( ... ), ${ ... }: to the matching close, nested quotes and brackets skipped.
        const char close = open == '"' ? '"' : (t_[i_ + 1] == '(' ? ')' : '}');
        out += t_[i_++];
        if (open == '$') out += t_[i_++];
        int depth = 1;
        while (i_ < t_.size()) {
            const char c = t_[i_];
            if (c == '\\' && i_ + 1 < t_.size()) {
                if (t_[i_ + 1] == '\n') ++line_;
                out += t_.substr(i_, 2);
                i_ += 2;
                continue;
            }
            if (c == close) {
                if (--depth == 0) {
                    out += c;
                    ++i_;
                    return;
                }
            }
            if (c == '\n') ++line_;
            if (close != '"' && (c == '\'' || c == '"' || c == '`')) {
                span(out);
                continue;
            }
            if (c == '$' && (peek(1) == '(' || peek(1) == '{')) {
                span(out);
                continue;
            }
            if (close == ')' && c == '(') ++depth;
            out += c;
            ++i_;
        }
        fail(start_line, open == '"' ? "a quote (\") is not closed" : "a $( or ${ is not closed");
    }

    void count_lines(std::size_t from, std::size_t to) { line_ += static_cast<std::size_t>(std::count(t_.begin() + from, t_.begin() + to, '\n')); }

    static bool assignment_prefix(const std::string& w) {
        if (w.empty() || !is_name_start(w[0])) return false;
        std::size_t k = 1;
        while (k < w.size() && is_name_char(w[k])) ++k;
        if (k < w.size() && w[k] == '+') ++k;
        return k + 1 == w.size() && w[k] == '=';
    }

    RawWord word() {
        RawWord w;
        while (i_ < t_.size()) {
            if (i_ + 1 == t_.size() && skip_line_continuation()) break;
            const char c = t_[i_];
            if (c == '\\' && i_ + 1 < t_.size()) {
                if (t_[i_ + 1] == '\n') {
                    i_ += 2;
                    ++line_;
                    continue;
                }
                w.text += t_.substr(i_, 2);
                i_ += 2;
                continue;
            }
            if (c == '\'' || c == '"' || c == '`' || (c == '$' && (peek(1) == '(' || peek(1) == '{'))) {
                span(w.text);
                continue;
            }
            if (c == '(' && assignment_prefix(w.text)) {
                ++i_;
                w.array = true;
                w.items = array_items();
                return w;
            }
            // '&' of a redirection (2>&1) belongs to the word.
            if ((c == '&' && !w.text.empty() && (w.text.back() == '>' || w.text.back() == '<'))) {
                w.text += c;
                ++i_;
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '&' || c == '|') break;
            if (c == '<' && peek(1) == '<' && !w.text.empty() && w.text != "<") break;  // cat<<EOF: << starts a word of its own
            w.text += c;
            ++i_;
        }
        return w;
    }

    std::vector<std::string> array_items() {
        const std::size_t start_line = line_;
        std::vector<std::string> items;
        while (i_ < t_.size()) {
            if (skip_line_continuation()) continue;
            const char c = t_[i_];
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                if (c == '\n') ++line_;
                ++i_;
                continue;
            }
            if (c == '#') {
                while (i_ < t_.size() && t_[i_] != '\n') ++i_;
                continue;
            }
            if (c == ')') {
                ++i_;
                return items;
            }
            std::string item;
            while (i_ < t_.size()) {
                const char d = t_[i_];
                if (d == ' ' || d == '\t' || d == '\r' || d == '\n' || d == ')') break;
                if (d == '\\' && i_ + 1 < t_.size()) {
                    item += t_.substr(i_, 2);
                    i_ += 2;
                    continue;
                }
                if (d == '\'' || d == '"' || d == '`' || (d == '$' && (peek(1) == '(' || peek(1) == '{'))) {
                    span(item);
                    continue;
                }
                item += d;
                ++i_;
            }
            items.push_back(item);
        }
        fail(start_line, "an array's '(' is not closed");
    }

    const std::string& t_;
    const std::string& file_;
    std::size_t i_ = 0;
    std::size_t line_;
    int nesting_ = 0;
    std::string delimiter_;  // of a here-document whose body starts at the next line
    std::size_t owner_ = 0;  // the index its command will have
    bool strip_tabs_ = false;
};

}  // namespace

std::vector<ShellCommand> lex(const std::string& text, const std::string& file, std::size_t first_line) {
    return Lexer(text, file, first_line).commands();
}

}  // namespace ridgeline::shell
