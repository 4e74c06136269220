#include "calibration/sharded_case.hpp"

#include <array>

#include "core/error.hpp"

namespace ridgeline::calibration {

namespace {

constexpr std::array<std::string_view, 6> kNames = {"local", "gather_contraction", "reduce_scatter_partial",
                                                    "all_reduce_partial", "gather_weights", "tp_mlp"};
constexpr double kFloatBytes = 4.0;

double d(std::int64_t value) { return static_cast<double>(value); }

}  // namespace

const char* sharded_kind_name(ShardedKind kind) { return kNames[static_cast<std::size_t>(kind)].data(); }

std::optional<ShardedKind> parse_sharded_kind(std::string_view text) {
    for (std::size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == text) return static_cast<ShardedKind>(i);
    return std::nullopt;
}

std::string ShardedCase::name() const {
    std::string text = std::string(sharded_kind_name(kind)) + " m=" + std::to_string(m) + " k=" + std::to_string(k);
    text += kind == ShardedKind::tp_mlp ? " f=" + std::to_string(f) : " n=" + std::to_string(n);
    return text + " x" + std::to_string(devices);
}

CaseWork case_work(const ShardedCase& c) {
    const std::int64_t p = c.devices;
    const auto divides = [&](std::int64_t dim, const char* what) {
        if (p < 1 || dim < 1 || dim % p != 0)
            throw InputError("case", what, c.name() + ": expected a positive multiple of the device count");
    };
    CaseWork work;
    const bool shared = p > 1;
    const auto collective = [&](CollectiveKind kind, double bytes) {
        if (shared) work.collectives.push_back({kind, bytes});
    };
    switch (c.kind) {
        case ShardedKind::local:
            divides(c.m, "m");
            work.gemms.push_back({d(c.m / p), d(c.k), d(c.n)});
            break;
        case ShardedKind::gather_contraction:
            divides(c.k, "k");
            collective(CollectiveKind::all_gather, d(c.m) * d(c.k) * kFloatBytes);
            work.gemms.push_back({d(c.m), d(c.k), d(c.n)});
            break;
        case ShardedKind::reduce_scatter_partial:
        case ShardedKind::all_reduce_partial:
            divides(c.k, "k");
            divides(c.m, "m");
            work.gemms.push_back({d(c.m), d(c.k / p), d(c.n)});
            collective(c.kind == ShardedKind::all_reduce_partial ? CollectiveKind::all_reduce : CollectiveKind::reduce_scatter,
                       d(c.m) * d(c.n) * kFloatBytes);
            break;
        case ShardedKind::gather_weights:
            divides(c.m, "m");
            divides(c.n, "n");
            collective(CollectiveKind::all_gather, d(c.k) * d(c.n) * kFloatBytes);
            work.gemms.push_back({d(c.m / p), d(c.k), d(c.n)});
            break;
        case ShardedKind::tp_mlp:
            divides(c.m, "m");
            divides(c.f, "f");
            collective(CollectiveKind::all_gather, d(c.m) * d(c.k) * kFloatBytes);
            work.gemms.push_back({d(c.m), d(c.k), d(c.f / p)});
            work.gemms.push_back({d(c.m), d(c.f / p), d(c.k)});
            collective(CollectiveKind::reduce_scatter, d(c.m) * d(c.k) * kFloatBytes);
            break;
    }
    return work;
}

}  // namespace ridgeline::calibration
