#include "emit/torchtitan_split.hpp"

#include <algorithm>

namespace ridgeline {

std::int64_t torchtitan_stage_count(std::int64_t pp, bool looped, std::optional<std::int64_t> layers_per_stage, std::int64_t layers,
                                    std::int64_t first_less, std::int64_t last_less) {
    if (!layers_per_stage) return pp * (looped ? 2 : 1);
    return (layers + first_less + last_less + *layers_per_stage - 1) / *layers_per_stage;
}

std::optional<std::vector<std::int64_t>> torchtitan_stage_layers(std::int64_t stages, std::int64_t layers, std::int64_t first_less,
                                                               std::int64_t last_less) {
    if (stages < 1) return std::nullopt;
    if (stages == 1) return std::vector<std::int64_t>{layers};
    const std::int64_t effective = layers + first_less + last_less;
    if (stages > effective) return std::nullopt;
    const std::int64_t share = effective / stages, extra = effective % stages;
    if (share == 0 || first_less > share || last_less > share) return std::nullopt;
    std::vector<std::int64_t> out;
    std::int64_t left = layers;
    for (std::int64_t i = 0; i < stages; ++i) {
        std::int64_t take = share + (i < extra ? 1 : 0);
        if (i == 0) take -= first_less;
        else if (i == stages - 1) take -= last_less;
        take = std::min(take, left);  // torchtitan stops adding layers when they run out
        out.push_back(take);
        left -= take;
    }
    if (left != 0) return std::nullopt;  // cannot happen with the weights within the share; kept as a guard
    return out;
}

std::vector<std::int64_t> layers_per_rank(const std::vector<std::int64_t>& stage_layers, std::int64_t pp) {
    std::vector<std::int64_t> ranks(static_cast<std::size_t>(pp), 0);
    for (std::size_t i = 0; i < stage_layers.size(); ++i) ranks[i % static_cast<std::size_t>(pp)] += stage_layers[i];
    return ranks;
}

}  // namespace ridgeline
