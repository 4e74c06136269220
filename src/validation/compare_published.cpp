#include "validation/compare_published.hpp"

#include <cmath>

#include "core/error.hpp"
#include "sharding/strategy_file.hpp"
#include "validation/validate.hpp"

namespace ridgeline {

namespace {

PublishedComparison compare_one(const RunRecord& r, const std::filesystem::path& data_dir, unsigned threads) {
    PublishedComparison out;
    out.id = r.id;
    out.source = r.source_key;
    const RecordResult predicted = predict_record(r, data_dir);
    if (!predicted.ok) {
        out.reason = predicted.reason;
        return out;
    }
    try {
        const TrainingScenario scenario = record_scenario(r, data_dir);
        const TrainingReport published = simulate_training(scenario);
        out.published_step_s = published.step_time_s;
        out.published_fits = published.fits;

        TrainSearchSpec spec;
        static_cast<TrainingJob&>(spec) = scenario;
        spec.precision = scenario.plan.precision;
        spec.top_k = 1;
        spec.threads = threads;
        spec.reference_step_time_s = published.step_time_s;
        for (const auto& name : strategies_needed(spec.fixed)) spec.strategies[name] = resolve_strategy(name, data_dir);
        const TrainSearchResult result = search_training(spec);
        out.plans_valid = result.plans_valid();
        out.rank = result.plans_faster_than_reference + 1;
        if (result.top.empty()) {
            out.reason = "no plan of the search fits";
            return out;
        }
        out.best = result.top.front();
        out.best_step_s = out.best.step_time_s;
        out.ok = std::isfinite(out.predicted_gain());
        if (!out.ok) out.reason = "prediction is not finite";
    } catch (const InputError& e) {
        out.reason = e.what();
    }
    return out;
}

}  // namespace

std::vector<PublishedComparison> compare_published(const std::vector<RunRecord>& records, const std::filesystem::path& data_dir,
                                                   const std::string& source_filter, unsigned threads) {
    std::vector<PublishedComparison> out;
    for (const RunRecord& r : records)
        if (r.kind == "train" && r.source_key.find(source_filter) != std::string::npos) out.push_back(compare_one(r, data_dir, threads));
    return out;
}

}  // namespace ridgeline
