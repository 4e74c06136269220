#include "calibration/sweep.hpp"

#include <algorithm>
#include <chrono>

namespace ridgeline::calibration {

namespace {

std::string bytes_text(double bytes) {
    if (bytes >= 1024.0 * 1024.0) return std::to_string(static_cast<long long>(bytes / (1024.0 * 1024.0))) + " MiB";
    return std::to_string(static_cast<long long>(bytes / 1024.0)) + " KiB";
}

// Appends the sample on the first pass and keeps the fastest time after; samples are referred to
// by their place, as the vector grows.
template <class Sample>
std::function<void(double, bool)> keeper(std::vector<Sample>& samples, Sample sample) {
    return [&samples, sample, slot = std::size_t{0}](double time_s, bool first) mutable {
        if (first) {
            slot = samples.size();
            sample.time_s = time_s;
            samples.push_back(sample);
        } else {
            samples[slot].time_s = std::min(samples[slot].time_s, time_s);
        }
    };
}

}  // namespace

SweepPlan make_plan(int devices, bool validate, bool small, const std::vector<Dtype>& tensor_dtypes) {
    SweepPlan plan;
    // The GEMMs of LLM layers: decode's skinny rows (1..64) through long prefills and training
    // micro-batches (16k rows), against a square projection, an MLP's up and down projections, and
    // the largest (16k x 28k x 16k) the issue of measured kernels asks for.
    const std::vector<std::int64_t> rows = small ? std::vector<std::int64_t>{1, 16, 64, 1024}
                                                 : std::vector<std::int64_t>{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    const std::vector<std::array<std::int64_t, 2>> weights =
        small ? std::vector<std::array<std::int64_t, 2>>{{1024, 1024}, {2048, 512}}
              : std::vector<std::array<std::int64_t, 2>>{{4096, 4096}, {8192, 28672}, {28672, 8192}, {16384, 16384}};
    for (const Dtype dtype : tensor_dtypes)
        for (const auto& [k, n] : weights)
            for (const std::int64_t m : rows)
                // cuBLASLt's fp8 kernels take rows in multiples of 16 (as torch._scaled_mm does).
                if (dtype != Dtype::fp8 || m % 16 == 0) plan.tensor_gemms.push_back({dtype, m, k, n, 0});
    const std::int64_t p = devices;
    // Small runs scale every dimension down by 4, keeping each a positive multiple of p.
    const auto dim = [&](std::int64_t x) {
        const std::int64_t scaled = small ? std::max<std::int64_t>(4, x / 4) : x;
        return std::max(p, scaled / p * p);
    };
    // Powers of two, cubes and skewed shapes, some with one dimension of 8 or 16 (the tile model's knee).
    const std::vector<std::array<std::int64_t, 3>> gemms = {
        {64, 64, 64},     {128, 128, 128},  {256, 256, 256},  {512, 512, 512},  {1024, 1024, 1024},
        {32, 1024, 1024}, {1024, 32, 1024}, {1024, 1024, 32}, {8, 2048, 1024},  {2048, 8, 1024},
        {1024, 2048, 16}, {64, 512, 2048},  {512, 64, 512},   {256, 1024, 128}, {128, 256, 1024},
        {2048, 128, 256}, {16, 512, 512},   {512, 16, 512}};
    for (const auto& g : gemms) plan.gemms.push_back({dim(g[0]), dim(g[1]), dim(g[2])});
    const double mib = 1024.0 * 1024.0;
    // Beyond the last-level cache (tens of MiB): the bandwidth of memory, not of a cache.
    plan.copy_bytes = small ? std::vector<double>{16 * mib, 32 * mib, 64 * mib} : std::vector<double>{64 * mib, 128 * mib, 256 * mib};
    if (devices > 1) {
        // From messages that stay in cache to messages several times the cache: both regimes are fitted.
        const std::vector<double> sizes = small ? std::vector<double>{16 * 1024.0, 64 * 1024.0, 256 * 1024.0, mib, 4 * mib, 16 * mib}
                                                : std::vector<double>{64 * 1024.0, 256 * 1024.0, mib, 4 * mib, 16 * mib, 32 * mib, 64 * mib};
        for (const double bytes : sizes)
            for (const CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                                              CollectiveKind::all_to_all, CollectiveKind::permute})
                plan.collectives.emplace_back(kind, bytes);
    }
    if (validate) {
        // Shapes none of the fitting GEMMs has, each local GEMM inside the fitted range of dimensions;
        // collectives small and large next to their GEMMs (communication-bound where collectives run
        // below memory speed, as MPI's do here).
        const auto add = [&](ShardedKind kind, std::int64_t m, std::int64_t k, std::int64_t n, std::int64_t f, int on) {
            plan.holdout.push_back({kind, dim(m), dim(k), dim(n), f > 0 ? dim(f) : 0, on});
        };
        // One device first: a run cut short by its budget still has both device counts.
        for (const int on : devices > 1 ? std::vector<int>{1, devices} : std::vector<int>{1}) {
            add(ShardedKind::local, 640, 768, 384, 0, on);
            add(ShardedKind::tp_mlp, 384, 512, 512, 1536, on);
            add(ShardedKind::reduce_scatter_partial, 96, 2560, 640, 0, on);
            if (on == 1) continue;
            add(ShardedKind::gather_contraction, 384, 640, 768, 0, on);
            add(ShardedKind::reduce_scatter_partial, 768, 1536, 384, 0, on);
            add(ShardedKind::all_reduce_partial, 320, 1536, 640, 0, on);
            add(ShardedKind::gather_weights, 16, 1536, 1536, 0, on);
            add(ShardedKind::all_reduce_partial, 2048, 16, 2048, 0, on);
            add(ShardedKind::tp_mlp, 16, 1536, 1536, 512, on);
        }
    }
    return plan;
}

SweepOutcome run_sweep(Backend& backend, const SweepPlan& plan, const Provenance& provenance, double budget_s,
                       const std::function<void(const StepReport&)>& progress,
                       const std::function<void(const Measurements&)>& save) {
    SweepOutcome outcome;
    Measurements& m = outcome.measurements;
    m.provenance = provenance;
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    struct Step {
        std::string name;
        std::function<double()> measure;
        std::function<void(double, bool)> keep;  // time, first pass
        bool measured = false;
    };
    std::vector<Step> steps;
    const std::string on = " on " + std::to_string(backend.devices()) + " devices";
    // Interleaved, so that a run cut short still has a spread of GEMMs, copies and collectives.
    const std::size_t rounds = std::max(
        {plan.gemms.size(), plan.tensor_gemms.size(), plan.copy_bytes.size(), plan.collectives.size(), plan.holdout.size()});
    for (std::size_t i = 0; i < rounds; ++i) {
        if (i < plan.tensor_gemms.size()) {
            const KernelGemmSample g = plan.tensor_gemms[i];
            steps.push_back({std::string(dtype_name(g.dtype)) + " GEMM " + std::to_string(g.m) + "x" + std::to_string(g.k) + "x" +
                                 std::to_string(g.n) + " on one device",
                             [&, g] { return backend.tensor_gemm_s(g.dtype, g.m, g.k, g.n); }, keeper(m.kernels.gemms, g)});
        }
        if (i < plan.gemms.size()) {
            const auto g = plan.gemms[i];
            steps.push_back({"GEMM " + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]) + on,
                             [&, g] { return backend.gemm_s(g[0], g[1], g[2]); }, keeper(m.gemms, GemmSample{g[0], g[1], g[2], 0})});
        }
        if (i < plan.copy_bytes.size()) {
            const double bytes = plan.copy_bytes[i];
            steps.push_back({"copy " + bytes_text(bytes) + on, [&, bytes] { return backend.copy_s(bytes); },
                             keeper(m.copies, CopySample{bytes, 0})});
        }
        if (i < plan.collectives.size()) {
            const auto [kind, bytes] = plan.collectives[i];
            steps.push_back({std::string(collective_name(kind)) + " " + bytes_text(bytes) + on,
                             [&, kind = kind, bytes = bytes] { return backend.collective_s(kind, bytes); },
                             keeper(m.collectives, CollectiveSample{kind, backend.devices(), bytes, 0})});
        }
        // Held-out cases among the fitting steps: a host whose load drifts during the run then
        // affects what is fitted and what is predicted alike.
        if (i < plan.holdout.size()) {
            const ShardedCase c = plan.holdout[i];
            steps.push_back({"held-out " + c.name(), [&, c] { return backend.sharded_s(c); }, keeper(m.sharded, ShardedSample{c, 0})});
        }
    }
    const int count = static_cast<int>(steps.size()) * plan.passes;
    int index = 0;
    for (int pass = 0; pass < plan.passes; ++pass) {
        for (Step& step : steps) {
            ++index;
            // Rank 0's clock decides for every rank.
            if (!backend.agree(elapsed() < budget_s)) {
                if (pass == 0) ++outcome.skipped;
                continue;
            }
            if (pass > 0 && !step.measured) continue;  // skipped on the first pass
            if (progress)
                progress({index, count, step.name + (pass > 0 ? " (pass " + std::to_string(pass + 1) + ")" : ""),
                          std::max(0.0, budget_s - elapsed())});
            step.keep(step.measure(), !step.measured);
            step.measured = true;
            if (save) save(m);
        }
        if (pass == 0 || backend.agree(elapsed() < budget_s)) outcome.passes = pass + 1;
    }
    return outcome;
}

}  // namespace ridgeline::calibration
