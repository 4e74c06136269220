#include "app/search_serve.hpp"

#include "accuracy/residuals_file.hpp"

namespace ridgeline::app {

SearchServeOutcome search_serve(const SearchServeRequest& request) {
    SearchServeOutcome out{search_serving(request.space), {}};
    const std::vector<Residual> residuals = load_residuals(serving_residuals_path(request.data_dir));
    // The search prices each configuration with the static model, as serve does without load.
    for (const ServeCandidate& c : out.result.best)
        out.best_intervals.push_back(prediction_interval(
            residuals, serving_run_kind("", request.space.hardware.chip.name, request.space.model.moe.has_value(), c.chips)));
    return out;
}

ServingScenario candidate_scenario(const ServeSearchSpace& space, const ServeCandidate& candidate) {
    ServingSetup setup;
    static_cast<ServedModel&>(setup) = static_cast<const ServedModel&>(space);
    setup.chips = candidate.chips;
    setup.plan = candidate.plan;
    setup.batch_seqs = candidate.batch_seqs;
    setup.input_len = space.input_len;
    setup.output_len = space.output_len;
    return build_serving_scenario(setup);
}

}  // namespace ridgeline::app
