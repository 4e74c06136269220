#include <nlohmann/json.hpp>

#include "engine/cost.hpp"
#include "report/bound_text.hpp"
#include "report/json_documents.hpp"
#include "report/reports.hpp"
#include "report/software_text.hpp"
#include "report/interval_text.hpp"
#include "report/table.hpp"

namespace ridgeline::report {

namespace {
std::string axes_text(const TrainingScenario& s) {
    std::string text;
    for (const auto& placed : s.mesh.axes) {
        if (placed.axis.size <= 1) continue;
        if (!text.empty()) text += ", ";
        text += placed.axis.name + "=" + std::to_string(placed.axis.size);
    }
    return text.empty() ? "single chip" : text;
}
// How experts and extra modules run, where the plan has them.
std::string moe_line(const TrainingScenario& s) {
    std::string text;
    if (s.plan.size(PlanAxis::expert) > 1 || !s.plan.expert_folded_axes.empty())
        text += std::string("experts: ") + s.plan.moe_dispatcher + " dispatch" +
                (s.plan.ep_overlap ? ", all-to-all overlapped" : "") + (s.plan.fp8_dispatch ? ", fp8 dispatch" : "") +
                (s.plan.expert_imbalance > 1.0 ? ", busiest rank x" + fixed(s.plan.expert_imbalance, 2) : ", balanced routing");
    if (s.plan.mtp_depth > 0) text += (text.empty() ? "" : "; ") + std::string("multi-token prediction: ") + std::to_string(s.plan.mtp_depth) + " module(s)";
    return text.empty() ? text : text + "\n";
}

std::string interval_line(const TrainingReport& r) {
    if (!r.interval) return "";
    const PredictionInterval& i = *r.interval;
    if (!i.available) return "step " + seconds(r.step_time_s) + ": " + i.why_none + "\n";
    return "step " + seconds(r.step_time_s) + " (" + fixed(100.0 * i.level, 0) + "%: " + time_range_text(r.step_time_s, i) + ", from " +
           std::to_string(i.runs) + " held-out runs like it: " + i.like + ")\n";
}

}  // namespace

std::string training_table(const TrainingScenario& s, const TrainingReport& r, double train_tokens) {
    std::string text = "Training " + s.model.name + " on " + std::to_string(s.cluster.chips()) + " x " + s.chip.name + " (" +
                       s.cluster.name + "), strategy " + s.strategy.name + ": " + axes_text(s) + "\n" +
                       "seq " + fixed(s.seq_len, 0) + ", global batch " + fixed(s.global_batch_seqs, 0) + " sequences (" +
                       si(r.tokens_per_step) + " tokens), micro-batch " + fixed(s.plan.micro_batch_seqs, 0) + " x " +
                       fixed(s.plan.microbatches, 0) + " per replica" +
                       (r.micro_batch_choice.empty() ? "" : " (" + r.micro_batch_choice + ")") + ", recompute " + s.plan.recompute.name + ", " +
                       std::string(dtype_name(s.plan.precision)) + "\n" + moe_line(s) + software_line(s.chip, s.stack) + "\n";
    Table steps({"component", "time per step", "share", "bound"});
    for (const auto& c : r.components) {
        if (c.time_s <= 0) continue;
        steps.add_row({c.name, seconds(c.time_s), fixed(100.0 * c.time_s / r.step_time_s, 1) + "%", limit_text(c.bound)});
    }
    steps.add_row({"step", seconds(r.step_time_s), "100.0%", limit_text(r.bound)});
    text += steps.render() + interval_line(r) + "\n";
    text += "one layer, one micro-batch: forward " + seconds(r.per_layer.forward_s) + ", backward " +
            seconds(r.per_layer.backward_s) + ", recompute " + seconds(r.per_layer.recompute_s) + ", exposed comms " +
            seconds(r.per_layer.exposed_comm_s) + "\n\n";
    Table totals({"quantity", "value"});
    totals.add_row({"tokens/s", si(r.tokens_per_s)});
    totals.add_row({"tokens/s per chip", si(r.tokens_per_s / static_cast<double>(s.cluster.chips()))});
    totals.add_row({"MFU", fixed(100.0 * r.mfu, 1) + "%"});
    totals.add_row({"HFU (with recomputation)", fixed(100.0 * r.hfu, 1) + "%"});
    if (train_tokens > 0) {
        const double seconds_to_train = r.time_to_train_s(train_tokens);
        totals.add_row({"time to train " + si(train_tokens) + " tokens", fixed(seconds_to_train / 86400.0, 2) + " days"});
        const auto cost = cost_usd(s.chip, static_cast<double>(s.cluster.chips()), seconds_to_train);
        totals.add_row({"cost at list price", cost ? "$" + si(*cost) : no_price_text(s.chip.name)});
    }
    text += totals.render() + "\n";
    Table memory({"memory per chip", "bytes"});
    memory.add_row({"parameters", si(r.memory.parameters_bytes, "B")});
    memory.add_row({"gradients", si(r.memory.gradients_bytes, "B")});
    memory.add_row({"optimizer state", si(r.memory.optimizer_bytes, "B")});
    memory.add_row({"activations (in-flight micro-batches)", si(r.memory.activations_bytes, "B")});
    memory.add_row({"buffers (logits, gathered weights)", si(r.memory.buffers_bytes, "B")});
    memory.add_row({"total", si(r.memory.total_bytes(), "B") + " of " + si(r.hbm_bytes, "B") + (r.fits ? " (fits)" : " (does NOT fit)")});
    if (r.memory.host_activations_bytes > 0)
        memory.add_row({"activations offloaded to host memory", si(r.memory.host_activations_bytes, "B") + " (not in the total)"});
    return text + memory.render();
}

nlohmann::json job_document(const std::string& schema, const std::string& model, const ChipSpec& chip, const Cluster& cluster,
                            const Stack& stack) {
    return {{"schema", schema},
            {"model", model},
            {"chip", chip.name},
            {"cluster", cluster.name},
            {"chips", cluster.chips()},
            {"stack",
             {{"name", stack.name},
              {"attention", attention_text(chip, stack)},
              {"kernels", kernels_source(chip)},
              {"parameters", stack_parameters_text(stack)}}}};
}

nlohmann::json training_document(const TrainingScenario& s, const TrainingReport& r, double train_tokens) {
    nlohmann::json doc = job_document("ridgeline.train/1", s.model.name, s.chip, s.cluster, s.stack);
    doc["strategy"] = s.strategy.name;
    for (const auto& placed : s.mesh.axes) doc["plan"]["axes"][placed.axis.name] = placed.axis.size;
    doc["plan"]["micro_batch_seqs"] = s.plan.micro_batch_seqs;
    doc["plan"]["microbatches"] = s.plan.microbatches;
    if (!r.micro_batch_choice.empty()) doc["plan"]["micro_batch_choice"] = r.micro_batch_choice;
    doc["plan"]["recompute"] = s.plan.recompute.name;
    doc["plan"]["zero"] = s.plan.zero_stage();
    doc["plan"]["reshard_after_forward"] = s.plan.reshards_after_forward();
    doc["plan"]["precision"] = dtype_name(s.plan.precision);
    doc["plan"]["moe_dispatcher"] = s.plan.moe_dispatcher;
    doc["plan"]["ep_overlap"] = s.plan.ep_overlap;
    doc["plan"]["fp8_dispatch"] = s.plan.fp8_dispatch;
    doc["plan"]["expert_imbalance"] = s.plan.expert_imbalance;
    doc["plan"]["mtp_depth"] = static_cast<double>(s.plan.mtp_depth);
    doc["seq_len"] = s.seq_len;
    doc["global_batch_seqs"] = s.global_batch_seqs;
    doc["step_time_s"] = r.step_time_s;
    if (r.interval) doc["step_time_interval"] = time_interval_json(r.step_time_s, *r.interval);
    doc["tokens_per_step"] = r.tokens_per_step;
    doc["tokens_per_s"] = r.tokens_per_s;
    doc["model_flops_per_token"] = r.model_flops_per_token;
    doc["mfu"] = r.mfu;
    doc["hfu"] = r.hfu;
    doc["bound"] = limit_text(r.bound);
    doc["breakdown"] = nlohmann::json::array();
    for (const auto& c : r.components) doc["breakdown"].push_back({{"name", c.name}, {"time_s", c.time_s}, {"bound", limit_text(c.bound)}});
    doc["per_layer"] = {{"forward_s", r.per_layer.forward_s},
                        {"backward_s", r.per_layer.backward_s},
                        {"recompute_s", r.per_layer.recompute_s},
                        {"exposed_comm_s", r.per_layer.exposed_comm_s}};
    doc["memory_per_chip_bytes"] = r.memory.total_bytes();
    doc["memory"] = {{"parameters_bytes", r.memory.parameters_bytes}, {"gradients_bytes", r.memory.gradients_bytes},
                     {"optimizer_bytes", r.memory.optimizer_bytes},   {"activations_bytes", r.memory.activations_bytes},
                     {"buffers_bytes", r.memory.buffers_bytes},       {"hbm_bytes", r.hbm_bytes}};
    if (r.memory.host_activations_bytes > 0) doc["memory"]["host_activations_bytes"] = r.memory.host_activations_bytes;
    doc["fits"] = r.fits;
    if (!r.fits) doc["overflow_bytes"] = r.memory.total_bytes() - r.hbm_bytes;
    doc["collectives_per_layer"] = nlohmann::json::array();
    for (const auto& c : r.collectives)
        doc["collectives_per_layer"].push_back({{"what", c.what}, {"op", collective_name(c.kind)}, {"axes", c.axes}, {"bytes", c.bytes}});
    if (train_tokens > 0) {
        doc["time_to_train_s"] = r.time_to_train_s(train_tokens);
        if (const auto cost = cost_usd(s.chip, static_cast<double>(s.cluster.chips()), r.time_to_train_s(train_tokens)))
            doc["cost_usd"] = *cost;
    }
    return doc;
}

std::string training_json(const TrainingScenario& s, const TrainingReport& r, double train_tokens) {
    return training_document(s, r, train_tokens).dump(2);
}

}  // namespace ridgeline::report
