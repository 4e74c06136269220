#pragma once
// --from FRAMEWORK FILE: a plan read back from a framework's launch configuration (Megatron-LM
// arguments, a MaxText YAML override), under the names of the framework's data file
// (emitters/*.json, the file --emit writes with). A key that changes the plan and is not
// understood, or keys that contradict each other or the model, are an InputError naming the file
// and the key; keys that change nothing Ridgeline models are accepted only where the data file
// lists them under "ignored".
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "emit/emitter_spec.hpp"
#include "engine/step_model.hpp"
#include "model/model_spec.hpp"
#include "spec/plan_knobs.hpp"
#include "scenario/training_setup.hpp"
#include "search/train_search.hpp"

namespace ridgeline {

// What the file fixes; everything unset is the command line's (train) or searched (search train).
struct LaunchConfig {
    std::string file;
    std::int64_t chips = 0;  // 0: the file does not say (Megatron-LM arguments)
    GivenDegrees degrees;
    GivenKnobs knobs;  // all but the recomputation policy, which is named here and found later
    std::optional<double> seq_len, global_batch_seqs;
    std::optional<std::string> stack;      // a stacks/ name where the file says how it runs (torchtitan's compile)
    std::optional<std::string> recompute;  // a recompute/ policy name
    std::string recompute_key;             // the key that set the policy, for errors
    std::vector<std::string> ignored;      // keys given that change nothing Ridgeline models, in file order
};

// The file's settings as the framework's data file names them: setting id -> value (a keyed
// setting's value, or the name of the matching choice). Pure text in, exposed for the readers.
struct LaunchEntries {
    std::string file;
    std::vector<EmitEntry> entries;  // in file order
    std::map<std::string, std::string> unknown;  // key -> why a launch script's value is not known statically
    std::int64_t processes = 0;                 // what a launch script's launcher starts (0: not said)
};
[[nodiscard]] std::map<std::string, std::string> match_settings(const EmitterSpec& spec, const LaunchEntries& entries);

// The readers: Megatron-LM arguments (one or more a line, '\' continuations, '#' comments; or
// the launch command of a shell script, from/shell_script.hpp; a repeated flag keeps its last
// value, as argparse does), a
// MaxText YAML override (yaml-cpp) or recipe script (a .sh file whose `python3 MaxText/train.py
// base.yml key=value ...` line is read statically), and a torchtitan TOML job file (toml++, tables
// flattened to dotted keys).
[[nodiscard]] LaunchEntries read_arguments_file(const std::filesystem::path& path);
[[nodiscard]] LaunchEntries read_yaml_file(const std::filesystem::path& path);
[[nodiscard]] LaunchEntries read_toml_file(const std::filesystem::path& path);

// Reads `path` as `framework`'s configuration of `model` on `chips` chips (0: not given on the
// command line; a MaxText file says them, Megatron-LM arguments and torchtitan files need them).
[[nodiscard]] LaunchConfig read_launch_config(const std::string& framework, const std::filesystem::path& path,
                                              const std::filesystem::path& data_dir, const ModelSpec& model, std::int64_t chips);

// The keys a file gives that its framework's data file lists as changing nothing Ridgeline
// models: the note that says so (empty when none), or with `strict` an InputError naming every one.
[[nodiscard]] std::string ignored_keys_note(const LaunchConfig& config, bool strict);

// Sets what the file fixes on `setup` (chips where the file says them, the degrees and knobs);
// the command line then overrides what it gives.
void apply_launch_config(const LaunchConfig& config, TrainingSetup& setup, const std::filesystem::path& data_dir);

// What the file fixes as a search's constraints (the recomputation policy is left to the caller,
// which resolves `recompute`). InputError naming the file's key for what a search cannot fix (an
// uneven pipeline split, expert ranks folded into tensor or context ranks).
[[nodiscard]] SearchConstraints launch_constraints(const LaunchConfig& config);

}  // namespace ridgeline
