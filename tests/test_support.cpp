#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "engine/step_model.hpp"
#include "engine/training.hpp"
#include "io/json_reader.hpp"
#include "model/model_catalog.hpp"
#include "hardware/catalog.hpp"
#include "scenario/serving_setup.hpp"
#include "scenario/training_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"

namespace ridgeline::test {

double component_s(const TrainingReport& report, const std::string& name) {
    for (const StepComponent& c : report.components)
        if (c.name == name) return c.time_s;
    FAIL("no component " << name);
    return 0;
}

ServingSetup serving_setup(const std::string& model, const std::string& hardware, std::int64_t chips, std::int64_t tp, double batch,
                           double input_len, double output_len) {
    ServingSetup setup;
    setup.model = resolve_model(model, source_dir());
    setup.strategy = resolve_strategy(kServingStrategy, source_dir());
    setup.hardware = resolve_hardware(hardware, source_dir());
    setup.stack = default_stack(setup.hardware.chip, true, source_dir());
    setup.chips = chips;
    setup.plan.tp = tp;
    setup.batch_seqs = batch;
    setup.input_len = input_len;
    setup.output_len = output_len;
    return setup;
}

std::string training_error_field(const TrainingSetup& setup) {
    try {
        (void)build_training_scenario(setup, source_dir(), "test");
    } catch (const InputError& e) {
        return e.field();
    }
    return "";
}

std::filesystem::path scratch_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("ridgeline_" + name + "_" + std::to_string(::getpid()));
    // An earlier process with the same pid (a long CI run reuses them) may have left files here:
    // each process starts from an empty folder.
    static std::set<std::string> emptied;
    if (emptied.insert(name).second) std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

nlohmann::json read_json(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

nlohmann::json train_json(const std::string& arguments) {
    const auto result = run_ridgeline("train " + arguments + " --json");
    CAPTURE(result.err);
    REQUIRE(result.exit_code == 0);
    return nlohmann::json::parse(result.out);
}

double step_part_s(const nlohmann::json& train_report, const std::string& name) {
    for (const auto& part : train_report.at("breakdown"))
        if (part.at("name") == name) return part.at("time_s").get<double>();
    FAIL("no step part " << name);
    return 0;
}

CommandResult run_ridgeline(const std::string& arguments) {
    const auto temp = std::filesystem::temp_directory_path();
    const auto err_path = temp / ("ridgeline_test_err_" + std::to_string(::getpid()));
    const auto rss_path = temp / ("ridgeline_test_rss_" + std::to_string(::getpid()));
    // /usr/bin/time reports the peak resident memory of ridgeline alone: a child forked from this
    // process would also count the pages it inherited from the test.
    const std::string command = "/usr/bin/time -f %M -o " + rss_path.string() + " " + std::string(RIDGELINE_BINARY) + " " +
                                arguments + " 2>" + err_path.string();
    CommandResult result;
    int out_pipe[2];
    REQUIRE(::pipe(out_pipe) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::dup2(out_pipe[1], STDOUT_FILENO);
        ::close(out_pipe[0]);
        ::close(out_pipe[1]);
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    std::array<char, 4096> buffer{};
    ssize_t read = 0;
    while ((read = ::read(out_pipe[0], buffer.data(), buffer.size())) > 0) result.out.append(buffer.data(), static_cast<std::size_t>(read));
    ::close(out_pipe[0]);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream rss(rss_path);
    std::string line, last;
    while (std::getline(rss, line))
        if (!line.empty()) last = line;  // "Command exited with non-zero status N" comes first
    REQUIRE_MESSAGE(!last.empty(), "/usr/bin/time wrote no peak resident memory (is the time package installed?)");
    result.max_rss_bytes = std::stod(last) * 1024.0;  // KiB
    std::filesystem::remove(rss_path);
    std::ifstream err(err_path);
    std::stringstream text;
    text << err.rdbuf();
    result.err = text.str();
    std::filesystem::remove(err_path);
    return result;
}

void expect_refusal(const std::string& arguments, const std::vector<std::string>& needles) {
    CAPTURE(arguments);
    const auto result = run_ridgeline(arguments);
    CAPTURE(result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    for (const auto& needle : needles) CHECK(result.err.find(needle) != std::string::npos);
    CHECK(result.err.find("nan") == std::string::npos);
}

std::string model_refusal(const std::string& path, const std::string& field) {
    try {
        (void)resolve_model(path, source_dir());
        FAIL("no error for " << field);
    } catch (const InputError& e) {
        CHECK(e.field() == field);
        CHECK(e.origin() == path);
        return e.what();
    }
    return "";
}

int check_reference_cases(const std::set<std::string>& topics, const std::map<std::string, CaseFunction>& functions) {
    int checked = 0;
    for (const nlohmann::json& c : io::parse_json_file(data_file("reference/scaling-book-cases.json"))) {
        if (!topics.count(c.at("topic").get<std::string>())) continue;
        const std::string id = c.at("id").get<std::string>();
        CAPTURE(id);
        const auto fn = functions.find(id);
        REQUIRE_MESSAGE(fn != functions.end(), "no Ridgeline computation for case " << id);
        const double expected = c.at("expected").at("value").get<double>();
        const double actual = fn->second(c.at("inputs"));
        CAPTURE(actual);
        CAPTURE(expected);
        CHECK(std::isfinite(actual));
        // A zero tolerance still allows the rounding of the book's printed answer (6 significant digits).
        CHECK(relative_error(actual, expected) <= std::max(c.at("tolerance_pct").get<double>() / 100.0, 5e-6));
        ++checked;
    }
    return checked;
}

std::vector<double> attention_pass_errors(const ChipSpec& chip, const nlohmann::json& cases) {
    std::vector<double> errors;
    for (const auto& a : cases) {
        const double b = a["batch"], h = a.value("q_heads", 32), s = a["seq"], d = a.value("head_dim", 128);
        // QK^T and AV: 4 B H S^2 D, half of it under a causal mask; the backward pass does kAttentionBackwardRatio x.
        const double forward_flops = 4.0 * b * h * s * s * d / (a.value("causal", true) ? 2.0 : 1.0);
        const std::string family = a["kernel"];
        const double forward_s = a["forward_s"], backward_s = a["forward_backward_s"].get<double>() - forward_s;
        errors.push_back(std::abs(attention_time(chip, family, AttentionPassKind::forward, forward_flops, 0, s).lower_bound_s() / forward_s - 1.0));
        errors.push_back(std::abs(attention_time(chip, family, AttentionPassKind::backward, kAttentionBackwardRatio * forward_flops, 0, s).lower_bound_s() / backward_s - 1.0));
    }
    return errors;
}

}  // namespace ridgeline::test
