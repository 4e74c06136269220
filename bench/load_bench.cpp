// The request-level simulator's speed against the static serve model, in the same run: 10,000
// requests of LLaMA-3 70B at concurrency 64 (goal <= 1 s on one core) and a one-hour trace at 20
// requests a second, streamed from a file (goal <= 10 s), each also as a ratio to one static
// `serve` evaluation. Exits 1 when a goal is missed.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "hardware/catalog.hpp"
#include "inference/load.hpp"
#include "io/trace_file.hpp"
#include "model/model_catalog.hpp"
#include "scenario/serving_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/engine_file.hpp"
#include "stack/stack_file.hpp"

using namespace ridgeline;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
    const std::filesystem::path data = argc > 1 ? argv[1] : ".";
    ServingSetup setup;
    setup.model = resolve_model("llama3-70b", data);
    setup.strategy = resolve_strategy(kServingStrategy, data);
    setup.hardware = resolve_hardware("dgx-h100", data);
    setup.stack = default_stack(setup.hardware.chip, true, data);
    setup.chips = 8;
    setup.plan.tp = 8;
    setup.batch_seqs = 64;
    setup.input_len = 1024;
    setup.output_len = 256;
    const ServingScenario scenario = build_serving_scenario(setup);
    const SchedulerSpec engine = resolve_engine("vllm", data);

    // Baseline: the static model, evaluated repeatedly for a stable time.
    double t0 = now_s();
    int evaluations = 0;
    double sink = 0;
    while (now_s() - t0 < 0.5) {
        sink += simulate_serving(scenario).tpot_s();
        ++evaluations;
    }
    const double static_s = (now_s() - t0) / evaluations;

    t0 = now_s();
    FixedLengthRequests closed(10'000, 1024, 256, 0);
    const LoadReport a = simulate_load(scenario, engine, closed, {64});
    const double closed_s = now_s() - t0;

    // A one-hour trace at 20 requests a second, written out and streamed back.
    const auto trace = std::filesystem::temp_directory_path() / "ridgeline-load-bench.jsonl";
    {
        std::ofstream out(trace);
        FixedLengthRequests poisson(72'000, 1024, 256, 20.0, 7);
        while (auto r = poisson.next())
            out << "{\"arrival_s\": " << r->arrival_s << ", \"input_tokens\": " << r->input_tokens << ", \"output_tokens\": " << r->output_tokens << "}\n";
    }
    t0 = now_s();
    io::TraceFile file(trace, 0);
    const LoadReport b = simulate_load(scenario, engine, file, {});
    const double trace_s = now_s() - t0;
    std::filesystem::remove(trace);

    std::printf("static serve, one evaluation: %.3f ms\n", 1e3 * static_s);
    std::printf("10,000 requests at concurrency 64: %.3f s (%.0fx one static evaluation; %lld iterations), goal <= 1 s\n", closed_s,
                closed_s / static_s, static_cast<long long>(a.steps));
    std::printf("one hour at 20 requests/s (72,000, streamed): %.3f s (%.0fx one static evaluation; %lld iterations), goal <= 10 s\n",
                trace_s, trace_s / static_s, static_cast<long long>(b.steps));
    const bool met = closed_s <= 1.0 && trace_s <= 10.0 && sink > 0;
    std::printf("goals %s\n", met ? "met" : "NOT met");
    return met ? 0 : 1;
}
