#include "validation/validate.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "model/recompute_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"

namespace ridgeline {

std::string record_chip_name(const std::string& accelerator, const std::filesystem::path& data_dir) {
    // Record ids are chip file names, save the format's two A100 ids that drop the "b".
    static const std::map<std::string, std::string> short_ids = {{"a100-40g", "a100-40gb"}, {"a100-80g", "a100-80gb"}};
    const auto alias = short_ids.find(accelerator);
    const std::string name = alias == short_ids.end() ? accelerator : alias->second;
    // Ids are lowercase-hyphen words (RUN-RECORD.md), never a path.
    const bool id = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
    return id && std::filesystem::is_regular_file(data_dir / "hardware" / "chips" / (name + ".json")) ? name : std::string();
}

std::optional<std::filesystem::path> record_stack_file(const RunRecord& r, const std::filesystem::path& data_dir) {
    if (r.framework.empty()) return std::nullopt;
    // Stacks list frameworks as aliases, a release as framework@version where its overheads differ.
    const auto stacks = list_stacks(data_dir);
    auto entry = io::find_entry(stacks, r.framework + "@" + r.framework_version);
    if (!entry) entry = io::find_entry(stacks, r.framework);
    if (!entry) return std::nullopt;
    return entry->file;
}

ModelSpec record_model(const RunRecord& r) {
    ModelSpec m;
    m.name = r.model_name;
    m.description = "from run record " + r.id;
    m.n_layers = r.layers;
    m.d_model = r.d_model;
    m.n_heads = r.heads;
    // MLA from its low-rank shapes; a record without them is modelled as full attention of the same heads.
    m.n_kv_heads = r.attention == "mla" ? r.heads : r.kv_heads;
    m.head_dim = r.head_dim;
    m.mla = r.mla;
    if (r.attention == "mla" && !r.mla) m.description += " (MLA shapes not given: modelled as multi-head attention)";
    m.d_ff = r.d_ff;
    m.vocab_size = r.vocab;
    m.mlp = r.gated_mlp ? MlpKind::gated : MlpKind::plain;
    m.tied_embeddings = r.tied_embeddings.value_or(false);
    // A learned table of one position per token of the sequence (MPT's max_seq_len x d_model).
    if (r.learned_positions) m.learned_position_embeddings = r.seq_len;
    if (r.moe) m.moe = MoeSpec{r.moe->experts, r.moe->top_k, r.moe->d_ff_expert, r.moe->shared_experts, r.moe->dense_layers};
    return m;
}

TrainingSetup record_training_setup(const RunRecord& r, const std::filesystem::path& data_dir) {
    const std::string chip = record_chip_name(r.accelerator, data_dir);
    if (chip.empty()) throw InputError("record " + r.id, "accelerator", "no hardware description for " + r.accelerator);
    if (!r.global_batch_seqs) throw InputError("record " + r.id, "global_batch_seqs", "no global batch size");
    TrainingSetup setup;
    setup.model = record_model(r);
    setup.hardware = resolve_hardware(chip, data_dir);
    if (r.scale_out_Bps_per_device) setup.hardware.chip.scale_out.bw_per_chip_Bps_one_way = *r.scale_out_Bps_per_device;
    setup.chips = r.count;
    if (r.num_slices) setup.domains = *r.num_slices;
    else if (r.nvlink_domain && r.count >= *r.nvlink_domain && setup.hardware.system &&
             setup.hardware.system->scale_up.domain_size == *r.nvlink_domain)
        setup.domains = (r.count + *r.nvlink_domain - 1) / *r.nvlink_domain;  // jobs may use part of each domain
    setup.seq_len = static_cast<double>(r.seq_len);
    setup.global_batch_seqs = static_cast<double>(*r.global_batch_seqs);
    // The stack the record's framework names; others run the chip's default.
    if (const auto file = record_stack_file(r, data_dir)) setup.stack = load_stack_file(*file);
    Plan& p = setup.plan;
    static_cast<Degrees&>(p) = r;
    // Unstated expert tensor parallelism: MoE parallel folding's 1 (Liu et al. 2025, arXiv 2504.14960;
    // Megatron-MoE-ModelZoo sets --expert-tensor-parallel-size 1) where ep spans the tensor ranks,
    // else Megatron-Core's default, tp.
    p.etp = r.etp.value_or(r.tp > 1 && r.sequence_parallel && r.ep % r.tp == 0 ? 1 : 0);
    p.fold_experts = true;
    // Interleaved at a depth the source does not give: the shallowest interleaving, two virtual
    // stages a rank, rather than a guess at how deep the team went (deeper runs faster on paper).
    p.vpp = r.vpp.value_or(r.pipeline_interleaved ? 2 : 1);
    // Records do not say how layers that do not divide evenly were split: spread them as evenly
    // as possible over the pipeline ranks (the largest stage sets the pace), interleaved where
    // every rank still has a layer per virtual stage.
    if (r.layers % (r.pp * p.vpp) != 0) {
        if (r.layers < r.pp * p.vpp) p.vpp = 1;
        if (r.layers % (r.pp * p.vpp) != 0) p.stage_layers = balanced_stage_layers(r.layers, r.pp);
    }
    p.sequence_parallel = r.sequence_parallel;
    p.zero = r.zero;
    // The reader lets a record name its recomputation one way: Megatron-Core's modules, a catalog policy, or the level.
    if (!r.recompute_modules.empty()) p.recompute = megatron_recompute_policy(r.recompute_modules, "record " + r.id, "plan.recompute_modules");
    else if (r.recompute_policy) p.recompute = resolve_recompute(*r.recompute_policy, data_dir, "record " + r.id, "plan.recompute_policy");
    else p.recompute = resolve_recompute(r.recompute, data_dir, "record " + r.id, "plan.recompute");
    p.micro_batch_seqs = r.micro_batch_seqs ? static_cast<double>(*r.micro_batch_seqs) : 0.0;
    p.precision = *parse_dtype(r.precision);
    p.overlap = r.comm_overlap.value_or(true);
    p.tp_overlap = r.comm_overlap.value_or(false);
    p.moe_dispatcher = r.moe_dispatcher.value_or("alltoall");
    p.ep_overlap = r.expert_comm_overlap.value_or(false);
    if (r.tpu_slice) p.strategy = r.tp > 1 || r.fsdp > 1 ? "maxtext" : "dp";
    return setup;
}

TrainingScenario record_scenario(const RunRecord& r, const std::filesystem::path& data_dir) {
    TrainingScenario scenario = price_training(record_training_setup(r, data_dir), data_dir, "record " + r.id).scenario;
    // What the run's own mixed-precision setting says wins over its stack's usual one.
    if (r.gradient_reduce_dtype) scenario.stack.fp32_gradient_reduction = *r.gradient_reduce_dtype == "fp32";
    return scenario;
}

RecordResult result_for(const RunRecord& r) {
    RecordResult result;
    result.id = r.id;
    result.kind = r.kind;
    result.source = r.source_key;
    return result;
}

std::string unpredictable_reason(const RunRecord& r, const std::filesystem::path& data_dir) {
    if (record_chip_name(r.accelerator, data_dir).empty()) return "no hardware description for accelerator " + r.accelerator;
    if (r.moe && r.moe->layer_freq != 1) return "MoE layers interleaved with dense ones (layer_freq > 1)";
    return "";
}

RecordResult predict_record(const RunRecord& r, const std::filesystem::path& data_dir) {
    if (r.kind == "serve") return predict_serve_record(r, data_dir);
    RecordResult result = result_for(r);
    result.measured_tokens_per_s = r.tokens_per_s.value_or(0.0);
    result.reason = !r.tokens_per_s        ? "no measured tokens/s"
                    : !r.global_batch_seqs ? "no global batch size"
                                           : unpredictable_reason(r, data_dir);
    if (!result.reason.empty()) return result;

    try {
        const TrainingReport report = simulate_training(record_scenario(r, data_dir));
        result.predicted_tokens_per_s = report.tokens_per_s;
        result.predicted_mfu = report.mfu;
        result.bound = report.bound;
        result.error = report.tokens_per_s / result.measured_tokens_per_s - 1.0;
        result.ok = std::isfinite(result.error);
        if (!result.ok) result.reason = "prediction is not finite";
    } catch (const InputError& e) {
        result.reason = e.what();
    }
    return result;
}

ErrorSummary summarize_errors(std::vector<double> errors) {
    ErrorSummary summary;
    summary.count = static_cast<int>(errors.size());
    if (errors.empty()) return summary;
    for (double& e : errors) e = std::fabs(e);
    std::sort(errors.begin(), errors.end());
    const auto rank = [&](double q) {
        const auto index = static_cast<std::size_t>(std::ceil(q * static_cast<double>(errors.size()))) - 1;
        return errors[std::min(index, errors.size() - 1)];
    };
    const std::size_t n = errors.size();
    summary.median_abs_error = n % 2 == 1 ? errors[n / 2] : 0.5 * (errors[n / 2 - 1] + errors[n / 2]);
    summary.p90_abs_error = rank(0.9);
    return summary;
}

ValidationResult validate_records(const std::vector<RunRecord>& records, const std::filesystem::path& data_dir,
                                  const std::function<void(std::size_t done, std::size_t total)>& progress) {
    ValidationResult result;
    std::vector<double> all, serve, ttft, itl;
    std::map<std::string, std::vector<double>> per_source;
    for (const RunRecord& record : records) {
        result.records.push_back(predict_record(record, data_dir));
        if (progress) progress(result.records.size(), records.size());
        const RecordResult& r = result.records.back();
        if (!r.ok) {
            ++result.skipped;
            continue;
        }
        if (r.kind == "serve") {
            serve.push_back(r.error);
            if (r.ttft) ttft.push_back(r.ttft->error());
            if (r.itl) itl.push_back(r.itl->error());
            continue;
        }
        all.push_back(r.error);
        per_source[r.source].push_back(r.error);
    }
    result.overall = summarize_errors(all);
    result.serve = summarize_errors(serve);
    result.serve_ttft = summarize_errors(ttft);
    result.serve_itl = summarize_errors(itl);
    for (auto& [source, errors] : per_source) result.by_source[source] = summarize_errors(errors);
    return result;
}

}  // namespace ridgeline
