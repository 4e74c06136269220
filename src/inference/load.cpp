#include "inference/load.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/error.hpp"

namespace ridgeline {

namespace {

double d(std::int64_t value) { return static_cast<double>(value); }

// A request on the replica. Invariant between iterations once decoding: computed = input + generated - 1
// (the newest token is not yet in the cache).
struct Live {
    Request request;
    std::int64_t computed = 0;  // tokens whose keys and values are cached
    std::int64_t target = 0;    // tokens to (re)compute before the next token: the prompt, or after a preemption all so far
    std::int64_t generated = 0;
    std::int64_t blocks = 0;
    double first_token_s = -1, last_token_s = 0;
    [[nodiscard]] bool prefilling() const { return computed < target; }
};

// Inter-token gaps, one per generated token after the first: too many to keep, so a histogram of
// 1%-wide bins from 1 us to 10^4 s (percentiles to within 1%), with the exact mean.
class GapHistogram {
public:
    void add(double gap_s, double count) {
        const double clamped = std::clamp(gap_s, kLow, kHigh);
        const auto bin = static_cast<std::size_t>(std::log(clamped / kLow) / std::log(kRatio));
        bins_[std::min(bin, bins_.size() - 1)] += count;
        total_ += count;
        sum_ += gap_s * count;
    }
    [[nodiscard]] Percentiles percentiles() const {
        Percentiles p;
        if (total_ <= 0) return p;
        p.mean = sum_ / total_;
        const auto at = [&](double q) {
            double seen = 0;
            for (std::size_t i = 0; i < bins_.size(); ++i)
                if ((seen += bins_[i]) >= q * total_) return kLow * std::pow(kRatio, d(static_cast<std::int64_t>(i)) + 0.5);
            return kHigh;
        };
        p.p50 = at(0.5);
        p.p90 = at(0.9);
        p.p99 = at(0.99);
        return p;
    }

private:
    static constexpr double kLow = 1e-6, kHigh = 1e4, kRatio = 1.01;
    std::vector<double> bins_ = std::vector<double>(static_cast<std::size_t>(std::log(kHigh / kLow) / std::log(kRatio)) + 2, 0.0);
    double total_ = 0, sum_ = 0;
};

Percentiles percentiles_of(std::vector<double>& values) {
    Percentiles p;
    if (values.empty()) return p;
    double sum = 0;
    for (double v : values) sum += v;
    p.mean = sum / d(static_cast<std::int64_t>(values.size()));
    // Nearest rank, as vLLM's benchmark (numpy's default linear interpolation differs by one sample).
    const auto at = [&](double q) {
        const auto rank = static_cast<std::size_t>(std::ceil(q * d(static_cast<std::int64_t>(values.size())))) - 1;
        std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
        return values[rank];
    };
    p.p50 = at(0.5);
    p.p90 = at(0.9);
    p.p99 = at(0.99);
    return p;
}

// Keeps at most kMax samples over a run of unknown length: when full, every other one goes and the
// stride doubles.
class QueueTrace {
public:
    void add(const QueueSample& sample) {
        if (seen_++ % stride_ != 0) return;
        samples_.push_back(sample);
        if (samples_.size() < kMax) return;
        for (std::size_t i = 0; i < samples_.size() / 2; ++i) samples_[i] = samples_[2 * i];
        samples_.resize(samples_.size() / 2);
        stride_ *= 2;
    }
    std::vector<QueueSample> take() { return std::move(samples_); }

private:
    static constexpr std::size_t kMax = 512;
    std::vector<QueueSample> samples_;
    std::int64_t seen_ = 0, stride_ = 1;
};

}  // namespace

FixedLengthRequests::FixedLengthRequests(std::int64_t count, std::int64_t input_tokens, std::int64_t output_tokens, double rate_per_s,
                                         std::uint64_t seed)
    : left_(count), input_(input_tokens), output_(output_tokens), rate_(rate_per_s), state_(seed * 0x9E3779B97F4A7C15ULL + 1) {}

std::optional<Request> FixedLengthRequests::next() {
    if (left_ <= 0) return std::nullopt;
    --left_;
    if (rate_ > 0) {
        // splitmix64 to a uniform in (0, 1), then an exponential gap.
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        const double uniform = (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
        clock_s_ += -std::log(uniform) / rate_;
    }
    return Request{clock_s_, input_, output_};
}

LoadReport simulate_load(const ServingScenario& scenario, const SchedulerSpec& scheduler, RequestSource& source,
                         const LoadOptions& options) {
    const std::int64_t concurrency = options.concurrency;
    const std::int64_t replicas = scenario.plan.dp;
    if (scenario.speculative.draft_tokens > 0)
        throw InputError(kRequest, "draft_tokens", "speculative decoding is not simulated request by request yet; drop --draft-tokens");
    if (concurrency < 0 || concurrency % replicas != 0)
        throw InputError(kRequest, "concurrency", "a concurrency of " + std::to_string(concurrency) + " does not split over " +
                                                     std::to_string(replicas) + " replicas");
    StepPricer pricer(scenario);

    // The cache: what the engine's memory fraction leaves after the weights and the working set of the
    // pass it profiles at start-up, a forward of its whole token budget (vLLM's profile_run, SGLang's
    // and TensorRT-LLM's max_num_tokens reservation).
    ServingScenario one = scenario;
    one.batch_seqs = d(replicas);
    const ServingReport fixed = simulate_serving(one);
    const double kv_bytes_per_token = fixed.memory.kv_cache_bytes / (scenario.input_len + scenario.output_len);
    ServingScenario profiled = one;
    profiled.input_len = d(scheduler.max_batched_tokens);
    profiled.output_len = 1;
    const double taken = fixed.memory.weights_bytes + simulate_serving(profiled).memory.activations_bytes;
    const double kv_room = scheduler.kv_memory_basis == KvMemoryBasis::hbm ? scheduler.kv_memory_fraction * fixed.hbm_bytes - taken
                                                                            : scheduler.kv_memory_fraction * (fixed.hbm_bytes - taken);
    const auto total_blocks = static_cast<std::int64_t>(std::floor(kv_room / (kv_bytes_per_token * d(scheduler.kv_block_tokens))));
    if (total_blocks < 1)
        throw InputError(kRequest, "kv_memory_fraction", "the weights and activations leave no room for a KV cache in " +
                                                             std::to_string(scheduler.kv_memory_fraction) + " of HBM");
    const auto blocks_for = [&](std::int64_t tokens) { return (tokens + scheduler.kv_block_tokens - 1) / scheduler.kv_block_tokens; };

    LoadReport report;
    report.replicas = replicas;
    report.concurrency = concurrency;
    report.kv_blocks = total_blocks;

    // This replica's share: in a closed loop its clients; otherwise every replicas-th request.
    const std::int64_t clients = concurrency / replicas;
    std::int64_t request_index = 0;
    std::optional<Request> pending;  // the next arrival, not yet in the system
    const auto pull = [&]() -> std::optional<Request> {
        while (auto r = source.next()) {
            ++request_index;
            if (r->input_tokens < 1 || r->output_tokens < 1)
                throw InputError(source.where(request_index), "input_tokens", "a request needs at least one prompt and one output token");
            if (blocks_for(r->input_tokens + r->output_tokens) > total_blocks)
                throw InputError(source.where(request_index), "input_tokens",
                                 std::to_string(r->input_tokens + r->output_tokens) + " tokens need more KV cache than a replica holds (" +
                                     std::to_string(total_blocks * scheduler.kv_block_tokens) + " tokens)");
            // Without chunking a prompt runs whole in one iteration, and so does a preempted request's
            // recomputation: engines refuse what cannot (TensorRT-LLM a prompt over max_num_tokens,
            // vLLM a max_model_len over max_num_batched_tokens).
            const std::int64_t whole = r->input_tokens + (scheduler.kv_admission == KvAdmission::on_demand ? r->output_tokens : 0);
            if (!scheduler.chunked_prefill && whole > scheduler.max_batched_tokens)
                throw InputError(source.where(request_index), "input_tokens",
                                 std::to_string(whole) + " tokens in one iteration exceed the " + std::to_string(scheduler.max_batched_tokens) +
                                     "-token budget of " + scheduler.engine + " without chunked prefill: the engine would refuse the request");
            if ((request_index - 1) % replicas == 0) return r;
        }
        return std::nullopt;
    };

    std::deque<Live> waiting;
    std::vector<Live> running;
    std::int64_t free_blocks = total_blocks;
    double now_s = 0, first_arrival_s = -1, area = 0, latency_sum_s = 0;
    std::vector<double> ttft, tpot, e2e;
    std::int64_t within_slo = 0;
    GapHistogram gaps;
    QueueTrace queue;
    double running_sum = 0, tokens_sum = 0;
    std::int64_t peak_blocks = 0, in_system = 0;

    const auto arrive = [&](const Request& r, double at_s) {
        Live live;
        live.request = r;
        live.request.arrival_s = at_s;
        live.target = r.input_tokens;
        if (first_arrival_s < 0) first_arrival_s = at_s;
        area += now_s - at_s;  // in the system since it arrived, during the iteration that just ended
        ++in_system;
        waiting.push_back(live);
    };
    if (clients > 0) {
        for (std::int64_t i = 0; i < clients; ++i)
            if (auto r = pull()) arrive(*r, 0.0);
    } else {
        pending = pull();
    }

    StepShape step;
    struct Scheduled {
        std::size_t index;
        std::int64_t tokens;
    };
    std::vector<Scheduled> scheduled;
    for (;;) {
        if (clients == 0)
            while (pending && pending->arrival_s <= now_s) {
                arrive(*pending, pending->arrival_s);
                pending = pull();
            }
        if (running.empty() && waiting.empty()) {
            if (!pending) break;
            now_s = std::max(now_s, pending->arrival_s);  // idle until the next arrival
            continue;
        }

        // Form the iteration: running requests first (decodes, unfinished prompts), in order.
        std::int64_t budget = scheduler.max_batched_tokens;
        bool preempted = false;
        scheduled.clear();
        const auto preempt_last = [&] {
            Live victim = std::move(running.back());
            running.pop_back();
            free_blocks += victim.blocks;
            victim.blocks = 0;
            victim.target = victim.request.input_tokens + victim.generated;  // recompute everything so far
            victim.computed = 0;
            waiting.push_front(std::move(victim));
            ++report.preemptions;
            preempted = true;
        };
        // How many tokens of `r` to run now (0: not this iteration); a whole prompt when chunking is off.
        const auto tokens_for = [&](const Live& r, bool first) -> std::int64_t {
            if (!r.prefilling()) return budget > 0 ? 1 : 0;
            const std::int64_t left = r.target - r.computed;
            if (scheduler.chunked_prefill) return std::min({left, budget, scheduler.prefill_chunk_tokens});
            return left <= budget || first ? left : 0;
        };
        // The blocks a request holds once `n` more of its tokens run: all it will ever need when reserved whole.
        const auto blocks_after = [&](const Live& r, std::int64_t n) {
            return scheduler.kv_admission == KvAdmission::reserve_whole ? blocks_for(r.request.input_tokens + r.request.output_tokens)
                                                                         : blocks_for(r.computed + n);
        };
        const auto admissible = [&](const Live& r, std::int64_t n) {
            return n > 0 && static_cast<std::int64_t>(running.size()) < scheduler.max_seqs && blocks_after(r, n) <= free_blocks;
        };
        // Without mixed batches an iteration prefills only, whenever a prompt is under way or can start.
        bool prefill_only = false;
        if (!scheduler.mixed_batches) {
            prefill_only = std::any_of(running.begin(), running.end(), [](const Live& r) { return r.prefilling(); }) ||
                           (!waiting.empty() && admissible(waiting.front(), tokens_for(waiting.front(), true)));
        }
        for (std::size_t i = 0; i < running.size(); ++i) {
            if (!scheduler.mixed_batches && running[i].prefilling() != prefill_only) continue;
            const std::int64_t n = tokens_for(running[i], scheduled.empty());
            if (n == 0) continue;
            const std::int64_t need = blocks_after(running[i], n) - running[i].blocks;
            while (need > free_blocks && i < running.size()) preempt_last();
            if (i == running.size()) break;  // it was the newest and made way for the others
            running[i].blocks += need;
            free_blocks -= need;
            budget -= n;
            scheduled.push_back({i, n});
        }
        // Then waiting requests, oldest first, while there is room (none after a preemption).
        const bool admit = scheduler.mixed_batches || prefill_only;
        while (admit && (!preempted || scheduled.empty()) && !waiting.empty()) {
            const std::int64_t n = tokens_for(waiting.front(), scheduled.empty());
            if (!admissible(waiting.front(), n)) break;
            const std::int64_t need = blocks_after(waiting.front(), n);
            running.push_back(std::move(waiting.front()));
            waiting.pop_front();
            running.back().blocks = need;
            free_blocks -= need;
            budget -= n;
            scheduled.push_back({running.size() - 1, n});
        }
        if (scheduled.empty()) throw InputError(kRequest, "max_batched_tokens", "the scheduler can run no request (a budget too small?)");

        // Price it.
        step.decode_seqs = 0;
        step.decode_keys = 0;
        step.chunks.clear();
        step.logit_rows = 0;
        for (const Scheduled& s : scheduled) {
            const Live& r = running[s.index];
            if (r.prefilling()) {
                step.chunks.push_back({s.tokens, r.computed});
                if (r.computed + s.tokens == r.target) ++step.logit_rows;
            } else {
                ++step.decode_seqs;
                step.decode_keys += d(r.computed + 1);
                ++step.logit_rows;
            }
        }
        const double step_s = pricer.step_s(step);
        area += d(in_system) * step_s;
        now_s += step_s;
        ++report.steps;
        running_sum += d(static_cast<std::int64_t>(scheduled.size()));
        tokens_sum += d(scheduler.max_batched_tokens - budget);
        peak_blocks = std::max(peak_blocks, total_blocks - free_blocks);

        // Apply it: caches grow, tokens come out, finished requests leave.
        for (const Scheduled& s : scheduled) {
            Live& r = running[s.index];
            const bool was_prefilling = r.prefilling();
            r.computed += s.tokens;
            if (was_prefilling && r.prefilling()) continue;  // a chunk short of the end: no token yet
            if (r.generated == 0) r.first_token_s = now_s;
            else gaps.add(now_s - r.last_token_s, 1.0);
            r.target = std::max(r.target, r.computed);
            r.last_token_s = now_s;
            ++r.generated;
        }
        std::size_t kept = 0;
        for (std::size_t i = 0; i < running.size(); ++i) {
            Live& r = running[i];
            if (r.generated < r.request.output_tokens) {
                if (kept != i) running[kept] = std::move(r);
                ++kept;
                continue;
            }
            free_blocks += r.blocks;
            --in_system;
            const double ttft_s = r.first_token_s - r.request.arrival_s, e2e_s = now_s - r.request.arrival_s;
            ttft.push_back(ttft_s);
            e2e.push_back(e2e_s);
            latency_sum_s += e2e_s;
            const double tpot_s = r.request.output_tokens > 1 ? (e2e_s - ttft_s) / d(r.request.output_tokens - 1) : 0.0;
            if (r.request.output_tokens > 1) tpot.push_back(tpot_s);
            if ((options.slo_ttft_s <= 0 || ttft_s <= options.slo_ttft_s) && (options.slo_tpot_s <= 0 || tpot_s <= options.slo_tpot_s)) ++within_slo;
            report.input_tokens_per_s += d(r.request.input_tokens);
            report.output_tokens_per_s += d(r.request.output_tokens);
            if (clients > 0)
                if (auto next = pull()) arrive(*next, now_s);
        }
        running.resize(kept);
        queue.add({now_s, static_cast<std::int64_t>(waiting.size()), static_cast<std::int64_t>(running.size())});
    }

    const auto done = static_cast<std::int64_t>(e2e.size());
    if (done == 0) throw InputError(kRequest, "requests", "no request to simulate");
    report.duration_s = now_s - first_arrival_s;
    report.requests = done * replicas;
    const double chips = d(scenario.plan.chips());
    report.requests_per_s = d(report.requests) / report.duration_s;
    report.input_tokens_per_s *= d(replicas) / report.duration_s;
    report.output_tokens_per_s *= d(replicas) / report.duration_s;
    report.output_tokens_per_s_per_chip = report.output_tokens_per_s / chips;
    report.mean_in_system = area / report.duration_s;
    report.completion_rate_x_latency = d(done) / report.duration_s * (latency_sum_s / d(done));
    report.mean_running = running_sum / d(report.steps);
    report.mean_step_tokens = tokens_sum / d(report.steps);
    report.peak_kv_fraction = d(peak_blocks) / d(total_blocks);
    report.slo_given = options.slo_ttft_s > 0 || options.slo_tpot_s > 0;
    report.slo_met_fraction = d(within_slo) / d(done);
    report.goodput_requests_per_s = report.requests_per_s * report.slo_met_fraction;
    report.ttft_s = percentiles_of(ttft);
    report.tpot_s = percentiles_of(tpot);
    report.e2e_s = percentiles_of(e2e);
    report.itl_s = gaps.percentiles();
    report.queue = queue.take();
    return report;
}

}  // namespace ridgeline
