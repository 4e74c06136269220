#pragma once
// Shared helpers for the tests: where the repository is, and running the CLI.
// A tolerance is written doctest::Approx(x).scale(0).epsilon(e): without scale(0) doctest allows
// e x (1 + max(|x|, |actual|)), twice e near 1 and an absolute e on a small x (1e-3 around a value of
// 8e-6 passed anything).
#include <filesystem>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ridgeline {
struct ChipSpec;
struct TrainingReport;
struct TrainingSetup;
struct ServingSetup;
}  // namespace ridgeline

namespace ridgeline::test {

// The time of a step component by its report name ("attention", "expert all-to-all (exposed)", ...).
double component_s(const TrainingReport& report, const std::string& name);

// A serving job on shipped data: the model, hardware and the chip's default serving stack under
// the serving strategy, `chips` split `tp` ways (dp what they leave), `batch` sequences.
ServingSetup serving_setup(const std::string& model, const std::string& hardware, std::int64_t chips, std::int64_t tp, double batch,
                           double input_len, double output_len);

// The field an InputError names when `setup` is built into a training scenario ("" when it builds).
std::string training_error_field(const TrainingSetup& setup);

inline std::filesystem::path source_dir() { return RIDGELINE_SOURCE_DIR; }
inline std::filesystem::path data_file(const std::string& relative) { return source_dir() / "tests" / "data" / relative; }

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    double max_rss_bytes = 0;  // the command's peak resident memory (through /usr/bin/time)
};
// Runs the ridgeline binary with `arguments` (already shell-quoted where needed).
CommandResult run_ridgeline(const std::string& arguments);

// `ridgeline train ARGUMENTS --json`, which must succeed, as its JSON document; and the time of one
// row (by name) of that report's breakdown of the step.
nlohmann::json train_json(const std::string& arguments);
double step_part_s(const nlohmann::json& train_report, const std::string& name);

// The command is refused as bad input: exit 2, nothing on stdout, one line on stderr holding
// every needle (the file or flag, the field), no NaN.
void expect_refusal(const std::string& arguments, const std::vector<std::string>& needles);

// Loading the model file or Hugging Face config at `path` is refused naming that file and `field`;
// returns the message.
std::string model_refusal(const std::string& path, const std::string& field);

// A directory of this test process for files it writes ("ridgeline_<name>_<pid>"), created.
std::filesystem::path scratch_dir(const std::string& name);
nlohmann::json read_json(const std::filesystem::path& path);

// Runs every scaling-book reference case whose topic is in `topics` through the function named
// by its id (each must have one), checking the expected value within the case's tolerance.
// Returns how many were checked.
using CaseFunction = std::function<double(const nlohmann::json& inputs)>;
int check_reference_cases(const std::set<std::string>& topics, const std::map<std::string, CaseFunction>& functions);

// Relative difference |actual - expected| / |expected|.
inline double relative_error(double actual, double expected) {
    const double scale = expected < 0 ? -expected : expected;
    const double diff = actual > expected ? actual - expected : expected - actual;
    return scale > 0 ? diff / scale : diff;
}

// |predicted / measured - 1| of each forward and backward pass of measured attention cases (batch,
// seq, kernel, forward_s, forward_backward_s; q_heads, head_dim and causal default to the H100
// reference's 32, 128 and causal), as `chip`'s kernel model prices them.
[[nodiscard]] std::vector<double> attention_pass_errors(const ChipSpec& chip, const nlohmann::json& cases);

}  // namespace ridgeline::test
