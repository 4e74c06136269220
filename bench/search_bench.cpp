// Search throughput: plans evaluated per second per core on two full searches, against the
// straightforward evaluation (building and simulating each plan on its own, as `train` does),
// measured in the same run on plans of the same space.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "model/recompute_catalog.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "search/train_search.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"

using namespace ridgeline;

namespace {

double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
    return s(usage.ru_utime) + s(usage.ru_stime);
}

double wall_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Case {
    const char* title;
    const char* model;
    const char* hardware;
    std::int64_t chips;
    double seq_len;
    double global_batch_seqs;
};

void run(const Case& c, const std::filesystem::path& data_dir) {
    const Hardware hardware = resolve_hardware(c.hardware, data_dir);
    TrainSearchSpec spec;
    spec.model = resolve_model(c.model, data_dir);
    spec.chip = hardware.chip;
    ClusterShape shape;
    shape.chips = c.chips;
    spec.cluster = build_cluster(hardware, shape);
    spec.seq_len = c.seq_len;
    spec.global_batch_seqs = c.global_batch_seqs;
    spec.stack = default_stack(hardware.chip, false, data_dir);
    spec.fixed.recompute_policies = recompute_policies(data_dir, true);  // what `search train` tries
    spec.top_k = 400;  // the baseline re-evaluates these
    for (const auto& name : strategies_needed(spec.fixed)) spec.strategies[name] = resolve_strategy(name, data_dir);

    const double wall0 = wall_seconds(), cpu0 = cpu_seconds();
    const TrainSearchResult result = search_training(spec);
    const double wall_s = wall_seconds() - wall0, cpu_s = cpu_seconds() - cpu0;

    // Baseline: the same plans, each built from its plan spec and simulated on its own.
    std::vector<SearchedPlan> sample = result.top;
    sample.insert(sample.end(), result.pareto.begin(), result.pareto.end());
    const double base_cpu0 = cpu_seconds();
    double checksum = 0;
    for (const SearchedPlan& plan : sample) {
        TrainingSetup setup;
        setup.model = spec.model;
        setup.hardware = hardware;
        setup.chips = c.chips;
        setup.seq_len = spec.seq_len;
        setup.global_batch_seqs = spec.global_batch_seqs;
        setup.plan = plan;
        setup.stack = spec.stack;
        checksum += simulate_training(build_training_scenario(setup, data_dir, "plan")).step_time_s;
    }
    const double base_cpu_s = cpu_seconds() - base_cpu0;
    const double baseline_per_core = static_cast<double>(sample.size()) / base_cpu_s;
    const double evaluated_per_core = static_cast<double>(result.plans_evaluated) / cpu_s;
    const double costed_per_core = static_cast<double>(result.plans_costed) / cpu_s;

    std::printf("%s\n", c.title);
    std::printf("  plans evaluated        %14llu  (%llu fit and ranked, the rest rejected for a reason)\n",
                static_cast<unsigned long long>(result.plans_evaluated), static_cast<unsigned long long>(result.plans_costed));
    std::printf("  wall time              %14.2f s   (goal: under 10 s)\n", wall_s);
    std::printf("  cpu time               %14.2f s   on %u hardware threads\n", cpu_s, std::thread::hardware_concurrency());
    std::printf("  evaluated per core     %14.3g /s\n", evaluated_per_core);
    std::printf("  costed per core        %14.3g /s  (goal: 1e6)\n", costed_per_core);
    std::printf("  baseline per core      %14.3g /s  (train path, %zu plans, checksum %.3g)\n", baseline_per_core, sample.size(), checksum);
    std::printf("  speedup, costed plans  %14.0fx\n\n", costed_per_core / baseline_per_core);
}

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path data_dir = argc > 1 ? argv[1] : ".";
    run({"LLaMA-3 405B on 16,384 H100 (seq 8192, 16M-token batch)", "llama3-405b", "dgx-h100", 16384, 8192, 2048}, data_dir);
    run({"1T dense (Megatron GPT 1T) on a full TPU v5p pod (8,960 chips, seq 2048, batch 3072)", "megatron-1t", "tpu-v5p", 8960, 2048,
         3072},
        data_dir);
    return 0;
}
