#pragma once
// `search serve` as a request in and an outcome out: the serving configurations that meet the SLOs,
// each with its throughput's prediction interval from held-out serving runs like it, and the
// scenario an emitter writes for one of them. The CLI only parses flags and prints.
#include <filesystem>
#include <vector>

#include "accuracy/like_runs.hpp"
#include "inference/serve_search.hpp"
#include "scenario/serving_setup.hpp"

namespace ridgeline::app {

struct SearchServeRequest {
    ServeSearchSpace space;
    std::filesystem::path data_dir;  // where accuracy/serving-residuals.json is
};

struct SearchServeOutcome {
    ServeSearchResult result;
    std::vector<PredictionInterval> best_intervals;  // one per result.best, on its output tokens/s
};

// InputError as search_serving gives it (no price for a cost objective, an empty space).
[[nodiscard]] SearchServeOutcome search_serve(const SearchServeRequest& request);

// A searched configuration as a full serving scenario (what --emit writes and prices again).
[[nodiscard]] ServingScenario candidate_scenario(const ServeSearchSpace& space, const ServeCandidate& candidate);

}  // namespace ridgeline::app
