#pragma once
// `serve` as a request in and an outcome out: a deployment priced at one batch (or the largest of a
// range that fits, with the latency-throughput curve), optionally run under load by an engine's
// scheduler, split into prefill and decode replicas for a traffic, and its energy. The CLI only
// resolves flags and files into the request and prints the outcome.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/run_outlook.hpp"
#include "report/reports.hpp"
#include "scenario/serving_setup.hpp"

namespace ridgeline::app {

struct ServeRequest {
    ServingSetup setup;                 // its batch comes from `batches`
    std::vector<std::int64_t> batches;  // one batch, or a range: the largest that fits, and the curve
    std::string batches_text;           // as given, for errors
    // Under load (any of the three): a closed loop of clients, Poisson arrivals, or a trace file.
    std::int64_t concurrency = 0, requests = 1000;
    double request_rate = 0, slo_ttft_s = 0, slo_tpot_s = 0;
    std::filesystem::path trace;
    std::string engine;           // the scheduler under load; "": the chip's default
    double requests_per_s = 0;    // > 0: also split prefill and decode replicas for this traffic
    OperationsOverrides power;    // over the system's, for the energy
    std::filesystem::path data_dir;

    [[nodiscard]] bool under_load() const { return concurrency > 0 || request_rate > 0 || !trace.empty(); }
};

struct ServeOutcome {
    ServingScenario scenario;
    ServingReport report;
    report::ServeExtras extras;
};

// InputError naming --batch when no batch of a range splits over the replicas, or the setup's own
// fields (and a trace's file and line) when they do not describe a deployment.
[[nodiscard]] ServeOutcome serve(ServeRequest request);

}  // namespace ridgeline::app
