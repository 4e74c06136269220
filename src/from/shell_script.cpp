#include "from/shell_script.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <map>
#include <set>

#include "core/error.hpp"
#include "from/shell_lexer.hpp"

namespace ridgeline {

namespace {

using shell::at;
using shell::is_name_char;
using shell::is_name_start;
using shell::line_error;
using shell::Nesting;
using shell::RawWord;
using shell::ShellCommand;

constexpr std::size_t kMaxEvalDepth = 16;

// A value as the script would hold it: known text, or unknown and why.
struct Value {
    std::string text;
    std::optional<std::string> unknown;
};

struct Variable {
    std::vector<Value> items;  // one for a scalar
};

// An open if/loop/case/function/group and whether its commands run: for sure, not at all, or
// under a condition that cannot be evaluated.
enum class Runs { yes, no, maybe };
struct Frame {
    Frame(std::string k, std::size_t l, Runs r) : kind(std::move(k)), line(l), runs(r) {}
    std::string kind;  // if, loop, case, function, group
    std::size_t line = 0;
    Runs runs = Runs::yes;
    bool in_condition = false;
    std::optional<bool> condition;  // the if/elif test being read (nullopt: cannot be evaluated)
    bool branch_taken = false;      // an earlier branch ran for sure
    bool branch_maybe = false;      // an earlier branch may have run
    bool condition_started = false;
    bool braced = false;  // a function's '{' was read
};

const std::set<std::string> kDocumentShells = {"sbatch", "bash", "sh"};  // run a here-document as a script
const std::set<std::string> kLaunchers = {"torchrun", "python", "python3", "srun", "mpirun", "mpiexec", "deepspeed", "accelerate", "uv"};
// Modules `python -m` runs that start no training script of their own.
const std::set<std::string> kModuleTools = {"pip", "venv", "ensurepip", "torch.distributed.run", "torch.distributed.launch"};

class Interpreter {
public:
    explicit Interpreter(const std::string& file) : file_(file) {}

    void run(const std::string& text, std::size_t first_line, std::size_t depth) {
        if (depth > kMaxEvalDepth) throw line_error(file_, first_line, "eval nested too deeply");
        for (const ShellCommand& c : shell::lex(text, file_, first_line)) execute(c, depth);
    }

    LaunchCommand result() const {
        if (!frames_.empty())
            throw line_error(file_, frames_.back().line, "this " + frames_.back().kind + " is not closed");
        if (launches_.empty()) {
            std::string sourced;
            for (const std::string& s : sourced_) sourced += "; " + s;
            throw InputError(file_, "", "no launch command found (torchrun, python, srun, mpirun or deepspeed running a .py script)" +
                                            (sourced.empty() ? std::string() : sourced + " (other files are not read)"));
        }
        if (launches_.size() > 1) {
            std::string lines;
            for (const LaunchCommand& l : launches_) lines += (lines.empty() ? "" : ", ") + std::to_string(l.line);
            throw InputError(file_, "", "more than one launch command (lines " + lines + "): Ridgeline reads a script that starts one");
        }
        return launches_.front();
    }

private:
    // Whether commands run here: for sure, not at all, or maybe (the frames outside `inner` only,
    // when given: an if's own test runs whatever branch it picks).
    Runs runs(const Frame* inner = nullptr) const {
        Runs r = Runs::yes;
        for (const Frame& f : frames_) {
            if (&f == inner) break;
            if (f.runs == Runs::no) return Runs::no;
            if (f.runs == Runs::maybe) r = Runs::maybe;
        }
        return r;
    }
    std::size_t maybe_line() const {
        for (const Frame& f : frames_)
            if (f.runs == Runs::maybe) return f.line;
        return 0;
    }

    // ---- expansion ---------------------------------------------------------------------------
    Value lookup(const std::string& name, std::size_t line) const {
        if (std::isdigit(static_cast<unsigned char>(name[0])) != 0)
            return {"", at(line) + ": $" + name + ", the script's argument " + name + " (arguments are taken as not given, and it has no default)"};
        if (const auto it = vars_.find(name); it != vars_.end()) return it->second.items.empty() ? Value{} : it->second.items.front();
        return {"", at(line) + ": $" + name + " is not set by the script (it is the environment's)"};
    }
    bool is_set(const std::string& name) const { return vars_.count(name) != 0; }

    static long long checked(long long a, long long b, char op, bool& ok) {
        long long r = 0;
        switch (op) {
            case '+': ok = ok && !__builtin_add_overflow(a, b, &r); break;
            case '-': ok = ok && !__builtin_sub_overflow(a, b, &r); break;
            case '*': ok = ok && !__builtin_mul_overflow(a, b, &r); break;
            case '/': ok = ok && b != 0 && !(a == LLONG_MIN && b == -1); r = ok ? a / b : 0; break;
            case '%': ok = ok && b != 0 && !(a == LLONG_MIN && b == -1); r = ok ? a % b : 0; break;
            default: ok = false;
        }
        return r;
    }

    // Integer arithmetic of $(( )): + - * / % and parentheses over numbers and variable names.
    struct Arith {
        const Interpreter& in;
        const std::string& s;
        std::size_t line;
        std::size_t i = 0;
        bool ok = true;
        std::optional<std::string> unknown;
        int depth = 0;
        void space() {
            while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
        }
        long long primary() {
            space();
            if (++depth > 64) {
                ok = false;
                return 0;
            }
            long long r = 0;
            if (i < s.size() && s[i] == '(') {
                ++i;
                r = sum();
                space();
                if (i < s.size() && s[i] == ')') ++i;
                else ok = false;
            } else if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
                const bool neg = s[i++] == '-';
                r = primary();
                if (neg) r = checked(0, r, '-', ok);
            } else if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
                const std::size_t start = i;
                while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
                r = parse(s.substr(start, i - start));
            } else if (i < s.size() && is_name_start(s[i])) {
                const std::size_t start = i;
                while (i < s.size() && is_name_char(s[i])) ++i;
                const Value v = in.lookup(s.substr(start, i - start), line);
                if (v.unknown) {
                    if (!unknown) unknown = v.unknown;
                } else {
                    r = v.text.empty() ? 0 : parse(v.text);
                }
            } else {
                ok = false;
            }
            --depth;
            return r;
        }
        long long parse(const std::string& digits) {
            std::size_t k = 0;
            while (k < digits.size() && std::isspace(static_cast<unsigned char>(digits[k])) != 0) ++k;
            long long r = 0;
            bool any = false;
            for (; k < digits.size() && std::isdigit(static_cast<unsigned char>(digits[k])) != 0; ++k) {
                r = checked(r, 10, '*', ok);
                r = checked(r, digits[k] - '0', '+', ok);
                any = true;
            }
            if (!any || k != digits.size()) ok = false;
            return r;
        }
        long long product() {
            long long r = primary();
            for (space(); i < s.size() && (s[i] == '*' || s[i] == '/' || s[i] == '%'); space()) {
                const char op = s[i++];
                r = checked(r, primary(), op, ok);
            }
            return r;
        }
        long long sum() {
            long long r = product();
            for (space(); i < s.size() && (s[i] == '+' || s[i] == '-'); space()) {
                const char op = s[i++];
                r = checked(r, product(), op, ok);
            }
            return r;
        }
    };

    Value arithmetic(const std::string& expression, std::size_t line) {
        const Value text = expand_string(expression, line);
        if (text.unknown) return text;
        Arith a{*this, text.text, line, 0, true, std::nullopt, 0};
        const long long r = a.sum();
        a.space();
        if (a.unknown) return {"", a.unknown};
        if (!a.ok || a.i != text.text.size())
            return {"", at(line) + ": $((" + expression + ")) is not integer arithmetic Ridgeline evaluates (+ - * / % of whole numbers)"};
        return {std::to_string(r), std::nullopt};
    }

    // ${...}: the items it expands to (an array's elements for [@] and [*]).
    std::vector<Value> parameter(const std::string& inner, std::size_t line) {
        const auto unsupported = [&] {
            return std::vector<Value>{{"", at(line) + ": ${" + inner + "} (only ${NAME}, ${NAME[@]}, ${#NAME} and the -, :-, =, :=, +, :+ defaults are evaluated)"}};
        };
        if (inner.empty()) return unsupported();
        std::size_t k = 0;
        const bool length = inner[0] == '#' && inner.size() > 1;
        if (length) k = 1;
        const std::size_t name_start = k;
        if (k < inner.size() && (std::isdigit(static_cast<unsigned char>(inner[k])) != 0)) {
            while (k < inner.size() && std::isdigit(static_cast<unsigned char>(inner[k])) != 0) ++k;
        } else {
            while (k < inner.size() && is_name_char(inner[k])) ++k;
        }
        const std::string name = inner.substr(name_start, k - name_start);
        if (name.empty()) {
            if (inner == "@" || inner == "*") return {};
            if (inner == "#") return {{"0", std::nullopt}};
            return unsupported();
        }
        std::string index;
        if (k < inner.size() && inner[k] == '[') {
            const std::size_t close = inner.find(']', k);
            if (close == std::string::npos) return unsupported();
            index = inner.substr(k + 1, close - k - 1);
            k = close + 1;
        }
        const std::string op_and_word = inner.substr(k);
        std::vector<Value> items;
        const bool set = is_set(name);
        if (!set && op_and_word.empty()) return {lookup(name, line)};
        if (set) {
            const Variable& v = vars_.at(name);
            if (index.empty()) {
                if (!v.items.empty()) items.push_back(v.items.front());
            } else if (index == "@" || index == "*") {
                items = v.items;
            } else {
                const Value i = arithmetic(index, line);
                if (i.unknown) return {{"", i.unknown}};
                const long long n = std::stoll(i.text);
                if (n >= 0 && static_cast<std::size_t>(n) < v.items.size()) items.push_back(v.items[static_cast<std::size_t>(n)]);
            }
        }
        if (length) {
            if (!op_and_word.empty()) return unsupported();
            if (!index.empty()) return {{std::to_string(items.size()), std::nullopt}};
            if (!items.empty() && items.front().unknown) return {items.front()};
            return {{std::to_string(items.empty() ? 0 : items.front().text.size()), std::nullopt}};
        }
        if (op_and_word.empty()) return items;
        const bool colon = op_and_word[0] == ':';
        const std::size_t op_at = colon ? 1 : 0;
        if (op_at >= op_and_word.size()) return unsupported();
        const char op = op_and_word[op_at];
        if (op != '-' && op != '=' && op != '+') return unsupported();
        const std::string word = op_and_word.substr(op_at + 1);
        bool present = set;
        if (set && colon) {
            bool all_empty = true;
            for (const Value& v : items) {
                if (v.unknown) return {v};  // empty or not cannot be told
                all_empty = all_empty && v.text.empty();
            }
            present = !all_empty;
        }
        if (op == '+') return present ? std::vector<Value>{expand_string(word, line)} : std::vector<Value>{};
        if (present) return items;
        Value fallback = expand_string(word, line);
        if (op == '=') assign(name, {fallback}, false, line);
        return {fallback};
    }

    // Expands `raw` into fields: quoted parts stay whole, unquoted expansions split on blanks.
    std::vector<ShellWord> expand(const std::string& raw, std::size_t line) {
        const Nesting nested(nesting_, file_, line);
        std::vector<ShellWord> fields;
        ShellWord cur;
        bool started = false;
        const auto mark = [&](const std::optional<std::string>& why) {
            if (!why) return;
            if (!cur.unknown) cur.unknown = why;
            cur.known_from = cur.text.size();
        };
        const auto push = [&] {
            if (started) fields.push_back(cur);
            cur = ShellWord{};
            started = false;
        };
        // Unquoted: split on blanks; quoted: appended whole; each item of an array its own field.
        const auto add = [&](const std::vector<Value>& items, bool quoted, bool each_field) {
            for (std::size_t n = 0; n < items.size(); ++n) {
                if (n > 0 && each_field) push();
                const Value& v = items[n];
                // An unknown value with no text (a command's output) stays one unknown word.
                if (quoted || (v.unknown && v.text.empty())) {
                    cur.text += v.text;
                    mark(v.unknown);
                    started = true;
                    continue;
                }
                std::size_t p = 0;
                while (p < v.text.size()) {
                    if (std::isspace(static_cast<unsigned char>(v.text[p])) != 0) {
                        if (started) push();
                        ++p;
                        continue;
                    }
                    cur.text += v.text[p++];
                    mark(v.unknown);
                    started = true;
                }
            }
        };
        std::size_t i = 0;
        bool in_double = false;
        while (i < raw.size()) {
            const char c = raw[i];
            if (c == '\\' && i + 1 < raw.size()) {
                const char e = raw[i + 1];
                if (!in_double || e == '"' || e == '\\' || e == '$' || e == '`') cur.text += e;
                else cur.text += raw.substr(i, 2);
                started = true;
                i += 2;
                continue;
            }
            if (c == '\'' && !in_double) {
                // A quote left open (only in a default word cut from ${...}) runs to the end.
                const std::size_t close = std::min(raw.find('\'', i + 1), raw.size());
                cur.text += raw.substr(i + 1, close - i - 1);
                started = true;
                i = close + 1;
                continue;
            }
            if (c == '"') {
                in_double = !in_double;
                started = true;
                ++i;
                continue;
            }
            if (c == '`') {
                const std::size_t close = std::min(raw.find('`', i + 1), raw.size());
                add({{"", at(line) + ": `" + raw.substr(i + 1, close - i - 1) + "` (command substitution is not run)"}}, true, false);
                i = close + 1;
                continue;
            }
            if (c == '$' && i + 1 < raw.size()) {
                const char n = raw[i + 1];
                if (n == '(' || n == '{') {
                    const std::size_t end = matching(raw, i + 1);
                    const std::string inner = raw.substr(i + 2, end - i - 2);
                    if (n == '(' && inner.size() >= 2 && inner.front() == '(' && inner.back() == ')') {
                        add({arithmetic(inner.substr(1, inner.size() - 2), line)}, in_double, false);
                    } else if (n == '(') {
                        add({{"", at(line) + ": $(" + inner + ") (command substitution is not run)"}}, true, false);
                    } else {
                        const bool array = inner.find("[@]") != std::string::npos;
                        add(parameter(inner, line), in_double, array || !in_double);
                    }
                    i = end + 1;
                    continue;
                }
                if (is_name_start(n) || std::isdigit(static_cast<unsigned char>(n)) != 0) {
                    std::size_t k = i + 1;
                    if (std::isdigit(static_cast<unsigned char>(n)) != 0) k = i + 2;
                    else
                        while (k < raw.size() && is_name_char(raw[k])) ++k;
                    add({lookup(raw.substr(i + 1, k - i - 1), line)}, in_double, false);
                    i = k;
                    continue;
                }
                if (n == '@' || n == '*') {  // the script's arguments: not given
                    started = started || in_double;
                    i += 2;
                    continue;
                }
                if (n == '#') {
                    add({{"0", std::nullopt}}, in_double, false);
                    i += 2;
                    continue;
                }
                if (n == '$' || n == '?' || n == '!') {
                    add({{"", at(line) + ": $" + std::string(1, n) + " is only known when the script runs"}}, true, false);
                    i += 2;
                    continue;
                }
            }
            cur.text += c;
            started = true;
            ++i;
        }
        push();
        return fields;
    }

    // The index of the bracket closing the one at `open` ('(' or '{'), quotes skipped.
    static std::size_t matching(const std::string& s, std::size_t open) {
        const char o = s[open], c = o == '(' ? ')' : '}';
        int depth = 0;
        for (std::size_t i = open; i < s.size(); ++i) {
            if (s[i] == '\\') {
                ++i;
                continue;
            }
            if (s[i] == '\'' || s[i] == '"') {  // quoted brackets do not count, as the lexer read them
                const std::size_t close = s.find(s[i], i + 1);
                if (close == std::string::npos) return s.size() - 1;
                i = close;
                continue;
            }
            if (s[i] == o) ++depth;
            if (s[i] == c && --depth == 0) return i;
        }
        return s.size() - 1;
    }

    // The fields of `raw` joined by a space, as one value (an assignment's right side, a default).
    Value expand_string(const std::string& raw, std::size_t line) {
        Value out;
        for (const ShellWord& w : expand(raw, line)) {
            out.text += (out.text.empty() ? "" : " ") + w.text;
            if (w.unknown && !out.unknown) out.unknown = w.unknown;
        }
        return out;
    }

    // ---- commands ----------------------------------------------------------------------------
    void assign(const std::string& name, std::vector<Value> items, bool append, std::size_t line) {
        if (runs() == Runs::maybe) {
            const std::size_t cond = maybe_line();
            for (Value& v : items)
                if (!v.unknown) v.unknown = at(line) + ": " + name + " is set under the condition on line " + std::to_string(cond) +
                                            ", which cannot be evaluated without running the script";
            if (items.empty()) items.push_back({"", at(line) + ": " + name + " is changed under the condition on line " + std::to_string(cond) +
                                                        ", which cannot be evaluated without running the script"});
        }
        Variable& v = vars_[name];
        if (!append) v.items.clear();
        for (Value& item : items) v.items.push_back(std::move(item));
    }

    // NAME=value, NAME+=value, NAME=( ... ): true when `w` is one (and it is applied).
    bool assignment(const RawWord& w, std::size_t line) {
        const std::string& t = w.text;
        if (t.empty() || !is_name_start(t[0])) return false;
        std::size_t k = 1;
        while (k < t.size() && is_name_char(t[k])) ++k;
        const std::string name = t.substr(0, k);
        bool append = false;
        if (k < t.size() && t[k] == '+') {
            append = true;
            ++k;
        }
        if (k >= t.size() || t[k] != '=') return false;
        if (w.array) {
            std::vector<Value> items;
            for (const std::string& item : w.items)
                for (const ShellWord& f : expand(item, line)) items.push_back({f.text, f.unknown});
            assign(name, std::move(items), append, line);
            return true;
        }
        Value v = expand_string(t.substr(k + 1), line);
        if (append && is_set(name) && !vars_[name].items.empty() && runs() != Runs::maybe) {
            Value& last = vars_[name].items.front();
            last.text += v.text;
            if (v.unknown && !last.unknown) last.unknown = v.unknown;
            return true;
        }
        assign(name, {v}, false, line);
        return true;
    }

    // A test's verdict: [ ], [[ ]] and `test` over known strings and integers.
    std::optional<bool> test(const std::vector<ShellWord>& words) {
        if (words.empty()) return std::nullopt;
        std::vector<ShellWord> w = words;
        const std::string first = w.front().text;
        if (first == "[" || first == "[[") {
            if (w.back().text != (first == "[" ? "]" : "]]")) return std::nullopt;
            w.pop_back();
        } else if (first != "test") {
            if (first == "true" || first == ":") return true;
            if (first == "false") return false;
            return std::nullopt;
        }
        w.erase(w.begin());
        bool negate = false;
        if (!w.empty() && w.front().text == "!") {
            negate = true;
            w.erase(w.begin());
        }
        for (const ShellWord& x : w)
            if (x.unknown) return std::nullopt;
        std::optional<bool> r;
        if (w.size() == 1) r = !w[0].text.empty();
        if (w.size() == 2 && w[0].text == "-z") r = w[1].text.empty();
        if (w.size() == 2 && w[0].text == "-n") r = !w[1].text.empty();
        if (w.size() == 3) {
            const std::string& a = w[0].text;
            const std::string& op = w[1].text;
            const std::string& b = w[2].text;
            if ((op == "=" || op == "==") && b.find_first_of("*?[") == std::string::npos) r = a == b;
            if (op == "!=" && b.find_first_of("*?[") == std::string::npos) r = a != b;
            static const std::set<std::string> numeric = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
            if (numeric.count(op) != 0) {
                try {
                    std::size_t ea = 0, eb = 0;
                    const long long x = std::stoll(a, &ea), y = std::stoll(b, &eb);
                    if (ea == a.size() && eb == b.size())
                        r = op == "-eq" ? x == y : op == "-ne" ? x != y : op == "-lt" ? x < y : op == "-le" ? x <= y : op == "-gt" ? x > y : x >= y;
                } catch (const std::exception&) {
                }
            }
        }
        if (r && negate) r = !*r;
        return r;
    }

    void open_branch(Frame& f) {
        const Runs outer_branch = f.branch_taken ? Runs::no : (!f.condition ? Runs::maybe : (*f.condition ? Runs::yes : Runs::no));
        f.runs = outer_branch == Runs::no ? Runs::no : (f.branch_maybe && outer_branch == Runs::yes ? Runs::maybe : outer_branch);
        if (f.runs == Runs::yes) f.branch_taken = true;
        if (f.runs == Runs::maybe) f.branch_maybe = true;
        f.in_condition = false;
    }

    void execute(const ShellCommand& c, std::size_t depth) {
        std::vector<RawWord> words = c.words;
        // Keywords that open or close a block, then the rest of the command.
        while (!words.empty() && !words.front().array) {
            const std::string k = words.front().text;
            if (k == "if") {
                frames_.emplace_back("if", c.line, Runs::yes);
                frames_.back().in_condition = true;
            } else if (k == "elif") {
                if (frames_.empty() || frames_.back().kind != "if") fail(c.line, "elif without if");
                Frame& f = frames_.back();
                f.in_condition = true;
                f.condition_started = false;
                f.runs = Runs::yes;
            } else if (k == "then") {
                if (frames_.empty() || frames_.back().kind != "if") fail(c.line, "then without if");
                open_branch(frames_.back());
            } else if (k == "else") {
                if (frames_.empty() || frames_.back().kind != "if") fail(c.line, "else without if");
                Frame& f = frames_.back();
                f.condition = true;
                open_branch(f);
            } else if (k == "fi" || k == "done" || k == "esac" || k == "}") {
                if (frames_.empty()) fail(c.line, "'" + k + "' closes nothing");
                frames_.pop_back();
            } else if (k == "for" || k == "while" || k == "until" || k == "select") {
                frames_.emplace_back("loop", c.line, Runs::maybe);
                return;  // the loop's header
            } else if (k == "do") {
            } else if (k == "case") {
                frames_.emplace_back("case", c.line, Runs::maybe);
                return;
            } else if (k == "function" || (k.size() > 2 && k.ends_with("()"))) {
                // A function's body runs only if called; the script's launch is read at top level.
                Frame f("function", c.line, Runs::no);
                f.braced = words.back().text == "{";
                frames_.push_back(f);
                return;
            } else if (k == "{") {
                if (!frames_.empty() && frames_.back().kind == "function" && !frames_.back().braced) frames_.back().braced = true;
                else frames_.emplace_back("group", c.line, Runs::yes);
            } else {
                break;
            }
            words.erase(words.begin());
        }
        if (words.empty()) return;
        if (!frames_.empty() && frames_.back().kind == "if" && frames_.back().in_condition) {
            Frame& f = frames_.back();
            std::vector<ShellWord> expanded;
            if (runs(&f) != Runs::no)
                for (const RawWord& w : words)
                    for (ShellWord& x : expand(w.text, c.line)) expanded.push_back(std::move(x));
            const std::optional<bool> t = test(expanded);
            if (!f.condition_started) {
                f.condition = t;
            } else if (c.joined_by == "&&") {
                f.condition = (f.condition == false || t == false) ? std::optional<bool>(false) : (f.condition && t ? std::optional<bool>(true) : std::nullopt);
            } else if (c.joined_by == "||") {
                f.condition = (f.condition == true || t == true) ? std::optional<bool>(true) : (f.condition && t ? std::optional<bool>(false) : std::nullopt);
            } else {
                f.condition = t;
            }
            f.condition_started = true;
            return;
        }
        if (runs() == Runs::no) return;
        simple_command(words, c.line, depth, c.here_doc);
    }

    [[noreturn]] void fail(std::size_t line, const std::string& why) const { throw line_error(file_, line, why); }

    void simple_command(std::vector<RawWord> words, std::size_t line, std::size_t depth, const std::optional<shell::HereDoc>& here_doc) {
        static const std::set<std::string> declarations = {"export", "declare", "typeset", "local", "readonly"};
        // Assignments alone set variables; before a command they only set its environment.
        std::size_t first = 0;
        while (first < words.size() && (words[first].array || looks_assignment(words[first].text))) ++first;
        if (first == words.size()) {
            for (const RawWord& w : words) assignment(w, line);
            return;
        }
        const std::string name = words[first].text;
        if (declarations.count(name) != 0) {
            for (std::size_t k = first + 1; k < words.size(); ++k)
                if (!words[k].text.starts_with("-")) assignment(words[k], line);
            return;
        }
        if (name == "." || name == "source") {
            sourced_.push_back("line " + std::to_string(line) + " sources " + (first + 1 < words.size() ? words[first + 1].text : ""));
            return;
        }
        if (name == "unset") {
            for (std::size_t k = first + 1; k < words.size(); ++k) vars_.erase(words[k].text);
            return;
        }
        std::vector<ShellWord> expanded;
        for (std::size_t k = first; k < words.size(); ++k)
            for (ShellWord& x : expand(words[k].text, line)) expanded.push_back(std::move(x));
        while (!expanded.empty() && !expanded.front().unknown &&
               (expanded.front().text == "exec" || expanded.front().text == "nohup" || expanded.front().text == "time"))
            expanded.erase(expanded.begin());
        if (expanded.empty()) return;
        // sbatch <<EOF ... EOF, bash <<EOF: the document is the script that runs. Read in this
        // script's variables, as an unquoted delimiter expands them (other documents are data).
        if (here_doc && !expanded.front().unknown && kDocumentShells.count(base_name(expanded.front().text)) != 0 &&
            std::none_of(expanded.begin(), expanded.end(), [](const ShellWord& w) { return w.text == "-c"; })) {
            run(here_doc->body, here_doc->line, depth + 1);
            return;
        }
        if (expanded.front().text == "eval" && !expanded.front().unknown) {
            std::string text;
            for (std::size_t k = 1; k < expanded.size(); ++k) {
                if (expanded[k].unknown) {
                    if (mentions_launcher(expanded)) fail(line, "eval of a command that is not known statically: " + *expanded[k].unknown);
                    return;
                }
                text += (k > 1 ? " " : "") + expanded[k].text;
            }
            run(text, line, depth + 1);
            return;
        }
        launch(expanded, line, depth);
    }

    static bool looks_assignment(const std::string& t) {
        if (t.empty() || !is_name_start(t[0])) return false;
        std::size_t k = 1;
        while (k < t.size() && is_name_char(t[k])) ++k;
        if (k < t.size() && t[k] == '+') ++k;
        return k < t.size() && t[k] == '=';
    }

    static std::string base_name(const std::string& path) {
        const std::size_t slash = path.rfind('/');
        return slash == std::string::npos ? path : path.substr(slash + 1);
    }

    static bool mentions_launcher(const std::vector<ShellWord>& words) {
        for (const ShellWord& w : words)
            if (kLaunchers.count(base_name(w.text)) != 0) return true;
        return false;
    }

    void launch(const std::vector<ShellWord>& words, std::size_t line, std::size_t depth) {
        const std::string command = words.front().unknown ? "" : base_name(words.front().text);
        // srun ... sh -c "python pretrain_gpt.py ...": the string is the command.
        if (kLaunchers.count(command) != 0 || command == "sh" || command == "bash") {
            for (std::size_t k = 0; k + 1 < words.size(); ++k) {
                const std::string shell = words[k].unknown ? "" : base_name(words[k].text);
                if (shell != "sh" && shell != "bash") continue;
                // Its options before -c (bash -x -c, bash -l -c) change nothing it runs.
                std::size_t c = k + 1;
                while (c < words.size() && words[c].text != "-c" && words[c].text.size() > 1 && words[c].text.starts_with("-") && !words[c].unknown) ++c;
                if (c >= words.size() || words[c].text != "-c") continue;
                if (c + 1 >= words.size()) return;
                if (words[c + 1].unknown) fail(line, "the command run by " + shell + " -c is not known statically: " + *words[c + 1].unknown);
                run(words[c + 1].text, line, depth + 1);
                return;
            }
        }
        if (kLaunchers.count(command) == 0) return;
        std::size_t script = 1;
        while (script < words.size() && !(words[script].text.ends_with(".py") && !words[script].unknown)) ++script;
        // Else the last -m MODULE that is not a launcher or a package tool: MaxText's
        // `python3 -m maxtext.trainers.pre_train.train`.
        if (script == words.size())
            for (std::size_t k = 2; k < words.size(); ++k)
                if (words[k - 1].text == "-m" && !words[k - 1].unknown && !words[k].unknown && kModuleTools.count(words[k].text) == 0) script = k;
        if (script == words.size()) return;  // python -c, python -m pip install ...
        if (runs() == Runs::maybe)
            fail(line, "the launch command runs under the condition on line " + std::to_string(maybe_line()) +
                           ", which cannot be evaluated without running the script");
        LaunchCommand l;
        l.line = line;
        l.launcher = base_name(words.front().text);
        l.script = words[script].text;
        for (std::size_t k = script + 1; k < words.size(); ++k) {
            const std::string& t = words[k].text;
            if (!words[k].unknown && (t.starts_with(">") || t.starts_with("<") || t.starts_with("2>") || t.starts_with("1>") || t == "&>")) {
                if (t == ">" || t == "<" || t == ">>" || t == "2>" || t == "1>" || t == "&>") ++k;  // and its target
                continue;
            }
            l.args.push_back(words[k]);
        }
        l.processes = processes(std::vector<ShellWord>(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(script)));
        launches_.push_back(l);
    }

    // Processes the launcher starts, from its own options: torchrun's nproc per node x nodes,
    // srun's tasks, mpirun's -np, deepspeed's GPUs x nodes. 0 where any part is not known.
    static std::int64_t processes(const std::vector<ShellWord>& w) {
        std::map<std::string, std::string> opt;
        bool unknown = false;
        for (std::size_t k = 1; k < w.size(); ++k) {
            std::string key = w[k].text, value;
            if (!key.starts_with("-")) continue;
            if (const std::size_t eq = key.find('='); eq != std::string::npos) {
                value = key.substr(eq + 1);
                key = key.substr(0, eq);
            } else if (k + 1 < w.size()) {
                value = w[k + 1].text;
                if (w[k + 1].unknown) value = "?";
            }
            std::replace(key.begin(), key.end(), '_', '-');
            opt[key] = value;
            unknown = unknown || w[k].unknown.has_value();
        }
        const auto whole = [&](const std::string& key) -> std::int64_t {
            const auto it = opt.find(key);
            if (it == opt.end() || it->second.empty() || it->second.size() > 9) return 0;
            for (const char c : it->second)
                if (std::isdigit(static_cast<unsigned char>(c)) == 0) return 0;
            return std::stoll(it->second);
        };
        if (unknown) return 0;
        if (opt.count("--nproc-per-node") != 0) return whole("--nproc-per-node") * (opt.count("--nnodes") != 0 ? whole("--nnodes") : 1);
        if (opt.count("--num-gpus") != 0) return whole("--num-gpus") * (opt.count("--num-nodes") != 0 ? whole("--num-nodes") : 1);
        if (opt.count("--ntasks") != 0) return whole("--ntasks");
        if (opt.count("-n") != 0) return whole("-n");
        if (opt.count("-np") != 0) return whole("-np");
        if (opt.count("--ntasks-per-node") != 0 && (opt.count("--nodes") != 0 || opt.count("-N") != 0))
            return whole("--ntasks-per-node") * (opt.count("--nodes") != 0 ? whole("--nodes") : whole("-N"));
        return 0;
    }

    const std::string& file_;
    int nesting_ = 0;
    std::map<std::string, Variable> vars_;
    std::vector<Frame> frames_;
    std::vector<LaunchCommand> launches_;
    std::vector<std::string> sourced_;  // "line N sources FILE"
};

}  // namespace

bool looks_like_shell_script(const std::string& text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '#') {
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == '\\') {
            ++i;
            continue;
        }
        return text.compare(i, 2, "--") != 0;
    }
    return false;
}

LaunchCommand read_launch_command(const std::string& text, const std::string& file) {
    Interpreter interpreter(file);
    interpreter.run(text, 1, 0);
    return interpreter.result();
}

}  // namespace ridgeline
