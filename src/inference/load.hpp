#pragma once
// Serving as a running system: requests arrive (a closed loop of clients, an open loop, a trace),
// queue, and are served iteration by iteration by a continuous-batching scheduler, each iteration
// priced by the layer model (StepPricer). Reports latency percentiles and throughput under load.
// Pure: specs and a request source in, report out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "inference/percentiles.hpp"
#include "inference/scheduler.hpp"
#include "inference/serving.hpp"

namespace ridgeline {

struct Request {
    double arrival_s = 0;  // ignored in a closed loop, where a client sends when its last request ends
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
};

// Requests in arrival order, pulled one at a time (a trace of millions of lines is never held whole).
class RequestSource {
public:
    virtual ~RequestSource() = default;
    virtual std::optional<Request> next() = 0;
    // Where the last request came from, for an error about it (a trace names its file and line).
    [[nodiscard]] virtual std::string where(std::int64_t index) const { return "request " + std::to_string(index); }
};

// `count` requests of fixed lengths, arriving as a Poisson process at `rate_per_s` (0: all at once,
// as a closed loop ignores arrival times anyway). Seeded, so runs repeat.
class FixedLengthRequests final : public RequestSource {
public:
    FixedLengthRequests(std::int64_t count, std::int64_t input_tokens, std::int64_t output_tokens, double rate_per_s,
                        std::uint64_t seed = 1);
    std::optional<Request> next() override;

private:
    std::int64_t left_, input_, output_;
    double rate_, clock_s_ = 0;
    std::uint64_t state_;
};

struct QueueSample {
    double time_s = 0;
    std::int64_t waiting = 0, running = 0;
};

struct LoadReport {
    std::int64_t requests = 0;      // whole deployment
    std::int64_t replicas = 1;      // each simulated alike: one replica takes every replicas-th request
    std::int64_t concurrency = 0;   // closed loop clients (whole deployment); 0 for open loops and traces
    double duration_s = 0;          // first arrival to last completion
    Percentiles ttft_s, tpot_s, itl_s, e2e_s;
    double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, output_tokens_per_s_per_chip = 0;
    // Little's law, measured two ways on the replica: the time average of requests in it, and
    // its completion rate times their mean latency.
    double mean_in_system = 0, completion_rate_x_latency = 0;
    std::int64_t steps = 0, preemptions = 0;
    double mean_running = 0;        // sequences per iteration (decodes and prompts)
    double mean_step_tokens = 0;
    std::int64_t kv_blocks = 0;     // per replica
    double peak_kv_fraction = 0;    // of those blocks
    std::vector<QueueSample> queue; // at most a few hundred points over the run
    // With service levels: the share of requests meeting every one, and those requests per second.
    bool slo_given = false;
    double slo_met_fraction = 0, goodput_requests_per_s = 0;
};

struct LoadOptions {
    std::int64_t concurrency = 0;  // closed-loop clients over the deployment; 0: arrivals as the source times them
    // Service levels a request must meet to count towards goodput (0: not asked).
    double slo_ttft_s = 0, slo_tpot_s = 0;
};

// InputError naming the field when the load cannot run on this deployment (pipeline stages,
// speculative decoding, a request larger than the cache).
[[nodiscard]] LoadReport simulate_load(const ServingScenario& scenario, const SchedulerSpec& scheduler, RequestSource& requests,
                                       const LoadOptions& options);

}  // namespace ridgeline
