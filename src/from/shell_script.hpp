#pragma once
// A launch script read without running it: the command that starts training (torchrun, python,
// srun, mpirun, deepspeed ... script.py ARGS) with its words expanded as bash would expand them
// from what the script itself sets. Understood statically: assignments and `export`, arrays and
// `+=`, `${VAR}`, `${VAR:-default}` (and `-`, `:=`, `:+`), `${ARR[@]}`, `$(( ))` arithmetic, quotes,
// '\' continuations, comments, `if`/`elif`/`else` on string and integer tests of known values, and
// `eval` of a known string. The script's positional arguments are taken as not given (their
// defaults apply); a variable the script never sets is the environment's. What cannot be known
// without running anything (command substitution, such a variable with no default, a loop's
// effect, a test of a file) stays an unknown word carrying why and its line: it is an error only
// where a setting Ridgeline reads takes it. Pure text in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ridgeline {

struct ShellWord {
    std::string text;
    std::optional<std::string> unknown;  // why the value cannot be known statically (with its line)
    std::size_t known_from = 0;          // text from here on is the script's own, after any unknown part
};

struct LaunchCommand {
    std::size_t line = 0;           // where the command starts
    std::string launcher;           // torchrun, python3, srun ...
    std::string script;             // the training script (pretrain_gpt.py)
    std::vector<ShellWord> args;    // the script's arguments, expanded
    std::int64_t processes = 0;     // processes the launcher starts where it says statically (0: not known)
};

// True when `text` reads as a shell script rather than a plain list of --flags: its first word is
// not a flag.
[[nodiscard]] bool looks_like_shell_script(const std::string& text);

// The one launch command of the script. InputError naming `file` when there is none, or more than
// one (naming their lines), or the script is malformed (an unclosed quote, array or `if`).
[[nodiscard]] LaunchCommand read_launch_command(const std::string& text, const std::string& file);

}  // namespace ridgeline
