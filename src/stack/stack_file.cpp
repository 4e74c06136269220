#include "stack/stack_file.hpp"

#include <algorithm>
#include <tuple>

#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

const char* default_stack_name(bool tpu, bool serving) {
    if (tpu) return "maxtext";
    return serving ? "vllm" : "megatron-core";
}

Stack load_stack_file(const std::filesystem::path& path) {
    io::JsonFile file(path, "ridgeline.stack/1");
    io::JsonObject& root = file.root();
    Stack stack;
    std::tie(stack.name, stack.description) = io::read_named(root);
    stack.family = root.has("family") ? root.string("family") : stack.name;
    if (root.has("jobs")) {
        const std::vector<std::string> jobs = root.string_list("jobs");
        for (const std::string& job : jobs)
            if (job != "training" && job != "serving") root.fail("jobs", "expected training and/or serving, found \"" + job + "\"");
        if (jobs.empty()) root.fail("jobs", "names no job");
        stack.trains = std::find(jobs.begin(), jobs.end(), "training") != jobs.end();
        stack.serves = std::find(jobs.begin(), jobs.end(), "serving") != jobs.end();
    }
    stack.attention = {root.string("attention")};
    if (root.has("attention_fallback")) {
        for (const std::string& family : root.string_list("attention_fallback")) stack.attention.push_back(family);
    }
    const std::string elementwise = root.string("elementwise");
    if (elementwise != "fused" && elementwise != "eager") root.fail("elementwise", "expected \"fused\" or \"eager\", found \"" + elementwise + "\"");
    stack.fused_elementwise = elementwise == "fused";
    stack.fp32_cross_entropy = root.boolean("fp32_cross_entropy", false);
    stack.fp8_output_layer = root.boolean("fp8_output_layer", false);
    if (root.has("moe_dispatchers")) {
        stack.moe_dispatchers = root.string_list("moe_dispatchers");
        for (const std::string& name : stack.moe_dispatchers)
            if (!known_moe_dispatcher(name)) root.fail("moe_dispatchers", "expected \"alltoall\" or \"deepep\", found \"" + name + "\"");
    }
    stack.expert_comm_overlap = root.boolean("expert_comm_overlap", false);
    // SMs held by overlapped collectives, each with where the figure comes from.
    const auto sms = [&](const char* field, const char* source, double& value) {
        if (!root.has(field)) return;
        value = root.non_negative_number(field);
        if (value > 1000) root.fail(field, "expected at most 1000 (more SMs than any GPU has)");
        (void)root.string(source);
    };
    sms("expert_comm_sms", "moe_source", stack.expert_comm_sms);
    sms("tp_comm_sms_forward", "tp_comm_source", stack.tp_comm_sms_forward);
    sms("tp_comm_sms_backward", "tp_comm_source", stack.tp_comm_sms_backward);
    sms("sharded_comm_sms", "sharded_comm_source", stack.sharded_comm_sms);
    stack.sharded_comm_blocks = root.boolean("sharded_comm_blocks", false);
    stack.sharded_copies_per_rank = root.boolean("sharded_copies_per_rank", false);
    if (stack.sharded_comm_blocks || stack.sharded_copies_per_rank) (void)root.string("sharded_collectives_source");
    else root.allow("sharded_collectives_source");
    stack.pipeline_scatter_gather = root.boolean("pipeline_scatter_gather", false);
    stack.interleaved_send_overlap = root.boolean("interleaved_send_overlap", false);
    if (stack.pipeline_scatter_gather || stack.interleaved_send_overlap) (void)root.string("pipeline_source");
    else root.allow("pipeline_source");
    stack.fp32_gradient_reduction = root.boolean("fp32_gradient_reduction", false);
    if (stack.fp32_gradient_reduction) (void)root.string("gradient_source");
    else root.allow("gradient_source");
    if (root.has("moe_dispatchers") || stack.expert_comm_overlap) (void)root.string("moe_source");
    else root.allow("moe_source");
    auto fitted = root.object("fitted");
    stack.fitted_origin = fitted.string("origin");
    if (fitted.has("pooled")) {
        const std::string pooled = fitted.string("pooled");
        if (pooled != "family" && pooled != "all") fitted.fail("pooled", "expected \"family\" or \"all\", found \"" + pooled + "\"");
        stack.fitted_from = pooled == "family" ? "family" : "pooled";
    }
    stack.fitted.per_step_overhead_s = fitted.non_negative_number("per_step_overhead_s");
    // Published stacks lose well under a second a step to the host; a minute is a unit slip.
    if (stack.fitted.per_step_overhead_s > 60) fitted.fail("per_step_overhead_s", "expected at most 60 s a step");
    stack.fitted.layer_overhead_fraction = fitted.non_negative_number("layer_overhead_fraction");
    if (stack.fitted.layer_overhead_fraction > 1.0) fitted.fail("layer_overhead_fraction", "expected at most 1 (a layer's compute again)");
    stack.fitted.rank_time_cv = fitted.non_negative_number("rank_time_cv");
    if (stack.fitted.rank_time_cv > 0.5) fitted.fail("rank_time_cv", "expected at most 0.5 (ranks' step times varying by half of it)");
    if (fitted.has("sharded_comm_efficiency")) {
        stack.fitted.sharded_comm_efficiency = fitted.positive_number("sharded_comm_efficiency");
        if (stack.fitted.sharded_comm_efficiency > 1.0)
            fitted.fail("sharded_comm_efficiency", "expected a share of the collective rate in (0, 1]");
    }
    if (auto borrowed = fitted.optional_object("borrowed")) {
        for (const std::string& name : borrowed->keys()) {
            if (!fitted.has(name)) borrowed->fail(name, "not a parameter this fit gives");
            const std::string from = borrowed->string(name);
            if (from != "family" && from != "pooled") borrowed->fail(name, "expected \"family\" or \"pooled\", found \"" + from + "\"");
            stack.fitted_borrowed[name] = from;
        }
        borrowed->finish();
    }
    fitted.finish();
    root.allow("notes");
    root.finish();
    return stack;
}

void check_moe_dispatch(const Stack& stack, const std::string& dispatcher, bool overlap, const std::string& origin) {
    if (std::find(stack.moe_dispatchers.begin(), stack.moe_dispatchers.end(), dispatcher) == stack.moe_dispatchers.end())
        throw InputError(origin, "moe_dispatcher", "the " + stack.name + " stack has no " + dispatcher + " token dispatcher");
    if (overlap && !stack.expert_comm_overlap)
        throw InputError(origin, "ep_overlap", "the " + stack.name + " stack does not overlap the expert all-to-all");
}

std::vector<CatalogEntry> list_stacks(const std::filesystem::path& data_dir) { return io::list_catalog(data_dir / "stacks"); }

Stack resolve_stack(const std::string& name_or_path, const std::filesystem::path& data_dir) {
    return load_stack_file(io::catalog_file(name_or_path, list_stacks(data_dir), "stack"));
}

}  // namespace ridgeline

namespace ridgeline {

Stack default_stack(const ChipSpec& chip, bool serving, const std::filesystem::path& data_dir) {
    return resolve_stack(default_stack_name(chip.kind == ChipKind::tpu, serving), data_dir);
}

void require_job(const Stack& stack, bool serving, const std::string& origin) {
    if (serving ? stack.serves : stack.trains) return;
    throw InputError(origin, "stack", stack.name + " is " + (serving ? "a training stack: it does not serve" : "an inference engine: it does not train") +
                                          " (its file's \"jobs\")");
}

}  // namespace ridgeline
