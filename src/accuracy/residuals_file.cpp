#include "accuracy/residuals_file.hpp"

#include <cmath>

#include "inference/percentiles.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

std::filesystem::path residuals_path(const std::filesystem::path& data_dir) { return data_dir / "accuracy" / "held-out-residuals.json"; }
std::filesystem::path serving_residuals_path(const std::filesystem::path& data_dir) { return data_dir / "accuracy" / "serving-residuals.json"; }

bool is_stack_parameter(const std::string& name) {
    return name == "per_step_overhead_s" || name == "layer_overhead_fraction" || name == "rank_time_cv" || name == "sharded_comm_efficiency";
}

std::optional<std::pair<std::string, std::string>> family_parameter(const std::string& text) {
    const std::size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    std::pair<std::string, std::string> out{text.substr(0, colon), text.substr(colon + 1)};
    if (!is_stack_parameter(out.second)) return std::nullopt;
    return out;
}

FitPolicy load_fit_policy(const std::filesystem::path& data_dir) {
    const std::filesystem::path path = data_dir / "accuracy" / "fit-policy.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return {};
    io::JsonFile file(path, "ridgeline.fit-policy/1");
    io::JsonObject& root = file.root();
    (void)root.string("origin");
    FitPolicy policy;
    const auto names = [&](const char* key) {
        std::vector<std::string> list = root.has(key) ? root.string_list(key) : std::vector<std::string>{};
        for (const std::string& name : list)
            if (!is_stack_parameter(name)) root.fail(key, "\"" + name + "\" is not a stack parameter");
        return list;
    };
    policy.held = names("held");
    policy.held_when_pooled = names("held_when_pooled");
    policy.held_in_family = root.has("held_in_family") ? root.string_list("held_in_family") : std::vector<std::string>{};
    for (const std::string& entry : policy.held_in_family)
        if (!family_parameter(entry)) root.fail("held_in_family", "\"" + entry + "\" is not family:stack_parameter");
    root.allow("scores");
    root.finish();
    return policy;
}

std::vector<Residual> load_residuals(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return {};
    io::JsonFile file(path, "ridgeline.residuals/1");
    io::JsonObject& root = file.root();
    (void)root.string("origin");
    const nlohmann::json& list = root.raw("residuals");
    if (!list.is_array()) root.fail("residuals", "expected an array");
    std::vector<Residual> residuals;
    for (std::size_t i = 0; i < list.size(); ++i) {
        io::JsonObject item(list[i], path.string(), "residuals[" + std::to_string(i) + "]");
        Residual r;
        r.id = item.string("id");
        r.source = item.string("source");
        const nlohmann::json& error = item.raw("error");
        // A prediction error is predicted / measured - 1: above -1, and no model is off by 100x.
        if (!error.is_number() || !std::isfinite(error.get<double>()) || error.get<double>() <= -1.0 || error.get<double>() > 100.0)
            item.fail("error", "expected predicted / measured - 1, a number in (-1, 100]");
        r.error = error.get<double>();
        r.kind.stack_family = item.string("stack_family");
        r.kind.chip_family = item.string("chip_family");
        r.kind.moe = item.boolean("moe", false);
        r.kind.chips = item.positive_int("chips");
        const std::string params = item.string("parameters");
        if (params != "own" && params != "family" && params != "pooled" && params != "none")
            item.fail("parameters", "expected \"own\", \"family\", \"pooled\" or \"none\", found \"" + params + "\"");
        r.kind.params = params;
        if (item.has("quantity")) {
            r.quantity = item.string("quantity");
            bool known = r.quantity == "throughput";
            for (const char* statistic : Percentiles::kNames)
                known = known || r.quantity == std::string("ttft_") + statistic || r.quantity == std::string("itl_") + statistic;
            if (!known) item.fail("quantity", "expected \"throughput\", or ttft_ or itl_ and mean, p50, p90 or p99, found \"" + r.quantity + "\"");
        }
        item.finish();
        residuals.push_back(std::move(r));
    }
    root.finish();
    return residuals;
}

}  // namespace ridgeline
