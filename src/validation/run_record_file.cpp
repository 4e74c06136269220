#include <cmath>
#include <set>
#include <utility>

#include "core/error.hpp"
#include "inference/percentiles.hpp"
#include "model/plausible_sizes.hpp"
#include "model/recompute_catalog.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"
#include "spec/plan_check.hpp"
#include "validation/run_record.hpp"

namespace ridgeline {

namespace {

constexpr const char* kSchema = "ridgeline.run-record/1";

// Field access with the record's rules: every key present, nulls only where allowed.
class Fields {
public:
    Fields(const nlohmann::json& object, std::string origin, std::string path)
        : object_(object), origin_(std::move(origin)), path_(std::move(path)) {
        if (!object_.is_object()) fail("", "expected an object");
    }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        throw InputError(origin_, key.empty() ? path_ : path_ + "." + key, what);
    }
    const nlohmann::json& at(const std::string& key) {
        seen_.insert(key);
        const auto it = object_.find(key);
        if (it == object_.end()) fail(key, "missing (every key is required; unknown values are null)");
        return *it;
    }
    bool is_null(const std::string& key) { return at(key).is_null(); }
    [[nodiscard]] bool has(const std::string& key) const { return object_.contains(key); }
    std::string text(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_string()) fail(key, "expected a string");
        return v.get<std::string>();
    }
    std::optional<std::string> text_or_null(const std::string& key) {
        return is_null(key) ? std::nullopt : std::optional<std::string>(text(key));
    }
    std::string choice(const std::string& key, const std::set<std::string>& allowed) {
        const std::string value = text(key);
        if (!allowed.count(value)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            fail(key, "\"" + value + "\" is not one of " + list);
        }
        return value;
    }
    std::int64_t count(const std::string& key, std::int64_t minimum = 1, std::int64_t maximum = 1'000'000'000'000) {
        const auto& v = at(key);
        if (!v.is_number_integer()) fail(key, "expected a whole number");
        const auto value = v.get<std::int64_t>();
        if (value < minimum) fail(key, "expected at least " + std::to_string(minimum));
        if (value > maximum) fail(key, std::to_string(value) + " is implausible (at most " + std::to_string(maximum) + ")");
        return value;
    }
    std::optional<std::int64_t> count_or_null(const std::string& key, std::int64_t minimum = 1) {
        return is_null(key) ? std::nullopt : std::optional<std::int64_t>(count(key, minimum));
    }
    double positive(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_number()) fail(key, "expected a number");
        const double value = v.get<double>();
        if (!std::isfinite(value) || value <= 0) fail(key, "expected a finite number > 0");
        return value;
    }
    std::optional<double> positive_or_null(const std::string& key) {
        return is_null(key) ? std::nullopt : std::optional<double>(positive(key));
    }
    bool flag(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_boolean()) fail(key, "expected true or false");
        return v.get<bool>();
    }
    std::vector<std::string> texts(const std::string& key) {
        const auto& v = at(key);
        if (!v.is_array() || v.empty()) fail(key, "expected a non-empty list of names");
        std::vector<std::string> out;
        for (const auto& item : v) {
            if (!item.is_string()) fail(key, "expected a list of names");
            out.push_back(item.get<std::string>());
        }
        return out;
    }
    std::optional<bool> flag_or_null(const std::string& key) {
        return is_null(key) ? std::nullopt : std::optional<bool>(flag(key));
    }
    Fields object(const std::string& key) { return Fields(at(key), origin_, path_ + "." + key); }
    std::optional<double> measured(const std::string& key) {
        if (is_null(key)) return std::nullopt;
        Fields m = object(key);
        const double value = m.positive("value");
        (void)m.choice("status", {"stated", "derived"});
        m.finish();
        return value;
    }
    // An optional key (absent or null: not measured).
    std::optional<RunRecord::Latency> latency(const std::string& key) {
        if (!has(key) || is_null(key)) {
            seen_.insert(key);
            return std::nullopt;
        }
        Fields m = object(key);
        RunRecord::Latency out{m.positive("value"), ""};
        (void)m.choice("status", {"stated", "derived"});
        out.statistic = m.choice("statistic", {Percentiles::kNames.begin(), Percentiles::kNames.end()});
        m.finish();
        return out;
    }
    void finish() const {
        for (const auto& item : object_.items())
            if (!seen_.count(item.key())) fail(item.key(), "unknown key");
    }

private:
    const nlohmann::json& object_;
    std::string origin_, path_;
    std::set<std::string> seen_;
};

RunRecord parse_record(const nlohmann::json& value, const std::string& origin, std::size_t index, const std::vector<CatalogEntry>& policies) {
    RunRecord r;
    const std::string fallback = "records[" + std::to_string(index) + "]";
    if (value.is_object() && value.contains("id") && value["id"].is_string()) r.id = value["id"].get<std::string>();
    Fields f(value, origin, r.id.empty() ? fallback : "record " + r.id);
    r.id = f.text("id");
    r.kind = f.choice("kind", {"train", "serve"});
    {
        Fields s = f.object("source");
        r.source_key = s.text("key");
        r.source_title = s.text("title");
        (void)s.text_or_null("url");
        (void)s.text_or_null("location");
        r.reliability = s.choice("reliability", {"A", "B", "C"});
        s.finish();
    }
    {
        Fields m = f.object("model");
        r.model_name = m.text("name");
        r.layers = m.count("layers", 1, kMaxLayers);
        r.d_model = m.count("d_model", 1, kMaxWidth);
        r.heads = m.count("heads", 1, kMaxHeads);
        r.kv_heads = m.count("kv_heads", 1, kMaxHeads);
        r.head_dim = m.count("head_dim", 1, kMaxHeads);
        r.d_ff = m.count("d_ff", 1, kMaxFfnWidth);
        r.vocab = m.count("vocab", 1, kMaxVocabulary);
        r.gated_mlp = m.flag("gated_mlp");
        r.tied_embeddings = m.flag_or_null("tied_embeddings");
        r.attention = m.choice("attention", {"mha", "gqa", "mqa", "mla"});
        // Optional (this project's extension): how positions enter; absent: rotary.
        if (m.has("position_embeddings") && !m.is_null("position_embeddings"))
            r.learned_positions = m.choice("position_embeddings", {"rotary", "learned"}) == "learned";
        if (r.kv_heads > r.heads) m.fail("kv_heads", std::to_string(r.kv_heads) + " key/value heads exceed the " + std::to_string(r.heads) + " query heads");
        // Optional (this project's extension of the format): MLA's low-rank shapes.
        if (m.has("mla") && !m.is_null("mla")) {
            if (r.attention != "mla") m.fail("mla", "given for attention \"" + r.attention + "\"");
            Fields a = m.object("mla");
            MlaSpec mla;
            mla.q_lora_rank = a.count("q_lora_rank", 0);
            mla.kv_lora_rank = a.count("kv_lora_rank");
            mla.qk_nope_head_dim = a.count("qk_nope_head_dim");
            mla.qk_rope_head_dim = a.count("qk_rope_head_dim");
            mla.v_head_dim = a.count("v_head_dim");
            a.finish();
            r.mla = mla;
        }
        if (!m.is_null("moe")) {
            Fields e = m.object("moe");
            RunRecordMoe moe;
            moe.experts = e.count("experts", 1, kMaxExperts);
            moe.top_k = e.count("top_k");
            moe.d_ff_expert = e.count("d_ff_expert", 1, kMaxFfnWidth);
            moe.shared_experts = e.count("shared_experts", 0);
            moe.dense_layers = e.count("dense_layers", 0);
            moe.layer_freq = e.count("layer_freq");
            e.finish();
            if (moe.top_k > moe.experts) m.fail("moe.top_k", "exceeds the number of experts");
            if (moe.dense_layers >= r.layers) m.fail("moe.dense_layers", "must be below the number of layers");
            r.moe = moe;
        }
        m.finish();
    }
    {
        Fields h = f.object("hardware");
        r.accelerator = h.text("accelerator");
        // Ids are lowercase-hyphen words (RUN-RECORD.md): never a path to follow.
        if (r.accelerator.empty() || r.accelerator.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
            h.fail("accelerator", "not an accelerator id (lowercase letters, digits and hyphens)");
        r.count = h.count("count");
        r.devices_per_node = h.count_or_null("devices_per_node");
        r.nvlink_domain = h.count_or_null("nvlink_domain");
        r.scale_out_Bps_per_device = h.positive_or_null("scale_out_Bps_per_device");
        r.tpu_slice = h.text_or_null("tpu_slice");
        r.num_slices = h.count_or_null("num_slices");
        h.finish();
        const bool tpu = r.accelerator.rfind("tpu", 0) == 0;
        if (tpu && (!r.tpu_slice || !r.num_slices)) h.fail(r.tpu_slice ? "num_slices" : "tpu_slice", "a TPU record gives its slice and slice count");
        if (tpu && (r.devices_per_node || r.nvlink_domain)) h.fail(r.nvlink_domain ? "nvlink_domain" : "devices_per_node", "a TPU record has no GPU nodes");
        if (!tpu && (r.tpu_slice || r.num_slices)) h.fail(r.tpu_slice ? "tpu_slice" : "num_slices", "a GPU record has no TPU slices");
    }
    {
        Fields w = f.object("workload");
        constexpr auto kMaxTokens = static_cast<std::int64_t>(kMaxSequenceTokens);
        r.seq_len = w.count("seq_len", 1, kMaxTokens);
        r.global_batch_seqs = w.count_or_null("global_batch_seqs");
        r.global_batch_tokens = w.count_or_null("global_batch_tokens");
        r.micro_batch_seqs = w.count_or_null("micro_batch_seqs");
        if (r.kind == "serve") {
            r.input_len = w.count("input_len", 1, kMaxTokens);
            r.output_len = w.count("output_len", 1, kMaxTokens);
            r.concurrency = w.count_or_null("concurrency");
        }
        w.finish();
        if (r.global_batch_seqs && r.global_batch_tokens && *r.global_batch_tokens != *r.global_batch_seqs * r.seq_len)
            w.fail("global_batch_tokens", "differs from global_batch_seqs x seq_len");
        if (r.kind == "serve" && r.seq_len != *r.input_len + *r.output_len) w.fail("seq_len", "a serving record's seq_len is input_len + output_len");
    }
    {
        Fields p = f.object("plan");
        for (const DegreeField& d : kDegreeFields) r.*d.value = p.count(d.key);
        r.etp = p.count_or_null("etp");
        r.vpp = p.count_or_null("vpp");
        r.sequence_parallel = p.flag("sequence_parallel");
        r.zero = static_cast<int>(p.count("zero", 0));
        if (r.zero > 3) p.fail("zero", "expected 0, 1, 2 or 3");
        r.recompute = p.choice("recompute", {"none", "selective", "full"});
        r.comm_overlap = p.flag_or_null("comm_overlap");
        if (p.has("moe_dispatcher") && !p.is_null("moe_dispatcher")) r.moe_dispatcher = p.choice("moe_dispatcher", {"alltoall", "deepep"});
        if (p.has("expert_comm_overlap")) r.expert_comm_overlap = p.flag_or_null("expert_comm_overlap");
        if (p.has("gradient_reduce_dtype") && !p.is_null("gradient_reduce_dtype")) {
            if (r.kind == "serve") p.fail("gradient_reduce_dtype", "a training record's field; this record serves");
            r.gradient_reduce_dtype = p.choice("gradient_reduce_dtype", {"fp32", "bf16"});
        }
        if (p.has("kv_cache_dtype") && !p.is_null("kv_cache_dtype")) {
            if (r.kind != "serve") p.fail("kv_cache_dtype", "a serving record's field; this record trains");
            r.kv_cache_dtype = p.choice("kv_cache_dtype", {"bf16", "fp8"});
        }
        if (p.has("attention_weights_dtype") && !p.is_null("attention_weights_dtype")) {
            if (r.kind != "serve") p.fail("attention_weights_dtype", "a serving record's field; this record trains");
            r.attention_weights_dtype = p.choice("attention_weights_dtype", {"bf16", "fp8"});
        }
        if (p.has("recompute_modules")) {
            r.recompute_modules = p.texts("recompute_modules");
            if (r.recompute != "selective") p.fail("recompute_modules", "names the modules of a selective recomputation; recompute is \"" + r.recompute + "\"");
            for (const std::string& name : r.recompute_modules)
                if (!megatron_recompute_module(name)) p.fail("recompute_modules", "unknown Megatron-Core module \"" + name + "\"");
        }
        if (p.has("recompute_policy")) {
            if (!r.recompute_modules.empty()) p.fail("recompute_policy", "given with recompute_modules: name the recomputation one way");
            const std::string name = p.text("recompute_policy");
            const auto entry = io::find_entry(policies, name);
            if (!entry) p.fail("recompute_policy", "unknown recomputation policy \"" + name + "\"; known: " + io::known_names(policies));
            // The policy refines the record's level: a full one recomputes whole layers, a selective one less.
            const bool whole_layers = recomputes(load_recompute_policy(entry->file).modules, RecomputeModule::layer);
            if (r.recompute == "none" || whole_layers != (r.recompute == "full"))
                p.fail("recompute_policy", "\"" + name + "\" recomputes " + (whole_layers ? "whole layers" : "part of each layer") +
                                               ", but recompute is \"" + r.recompute + "\"");
            r.recompute_policy = name;
        }
        if (p.has("pipeline_interleaved")) {
            r.pipeline_interleaved = p.flag("pipeline_interleaved");
            if (r.pipeline_interleaved && r.pp < 2) p.fail("pipeline_interleaved", "says the pipeline is interleaved, but pp is " + std::to_string(r.pp));
            if (r.pipeline_interleaved && r.vpp) p.fail("pipeline_interleaved", "says the depth is not stated, but vpp is " + std::to_string(*r.vpp));
        }
        p.finish();
        // The plan builder's rules, asked of the same function: FSDP shards within the data-parallel
        // ranks (over context ranks as well, as torchtitan's FSDP2 does with context parallelism, is not modelled).
        Plan plan;
        for (const DegreeField& d : kDegreeFields) plan.*d.value = r.*d.value;
        plan.vpp = r.vpp.value_or(1);
        plan.sequence_parallel = r.sequence_parallel;
        plan.zero = r.zero;
        if (const auto fault = structure_fault(plan, r.count)) p.fail(fault->field, fault->message);
        if (!r.moe && r.ep != 1) p.fail("ep", "a dense model has ep 1");
        if (r.ep == 1 && (r.moe_dispatcher || r.expert_comm_overlap.value_or(false)))
            p.fail(r.moe_dispatcher ? "moe_dispatcher" : "expert_comm_overlap", "given without expert parallelism (ep 1)");
        if (r.etp && (r.dp * r.cp * r.tp) % (r.ep * *r.etp) != 0) p.fail("etp", "ep x etp does not divide dp x cp x tp");
    }
    r.precision = f.choice("precision", {"bf16", "fp16", "fp8"});
    {
        Fields m = f.object("measured");
        using Figure = std::optional<double> RunRecord::*;
        for (const auto& [key, figure] : {std::pair<const char*, Figure>{"tokens_per_s", &RunRecord::tokens_per_s},
                                          {"step_time_s", &RunRecord::step_time_s}, {"mfu", &RunRecord::mfu},
                                          {"tflops_per_device", &RunRecord::tflops_per_device},
                                          {"peak_memory_bytes", &RunRecord::peak_memory_bytes},
                                          {"output_tokens_per_s", &RunRecord::output_tokens_per_s}})
            r.*figure = m.measured(key);
        r.ttft_s = m.latency("ttft_s");
        r.itl_s = m.latency("itl_s");
        m.finish();
        if ((r.ttft_s || r.itl_s) && (r.kind != "serve" || !r.concurrency))
            m.fail(r.ttft_s ? "ttft_s" : "itl_s", "a latency is measured of serving under load: give kind \"serve\" and workload.concurrency");
        if (r.mfu && *r.mfu >= 1.0) m.fail("mfu.value", "expected a fraction below 1");
    }
    r.flops_accounting = f.text("flops_accounting");
    if (f.has("software")) {  // records written before the field name no framework: the chip's default stack
        Fields w = f.object("software");
        r.framework = w.text("framework");
        r.framework_version = w.text_or_null("version").value_or("");
        (void)w.text("note");
        w.finish();
    }
    {
        const auto& assumed = f.at("assumed");
        if (!assumed.is_array()) f.fail("assumed", "expected an array of dotted paths");
        for (const auto& item : assumed) {
            if (!item.is_string()) f.fail("assumed", "expected dotted paths");
            r.assumed.push_back(item.get<std::string>());
        }
    }
    (void)f.text_or_null("notes");
    f.finish();
    return r;
}

}  // namespace

std::vector<RunRecord> load_run_records(const std::filesystem::path& path, const std::filesystem::path& data_dir) {
    const nlohmann::json document = io::parse_json_file(path);
    const std::string origin = path.string();
    if (!document.is_object()) throw InputError(origin, "", "expected an object with schema and records");
    const auto schema = document.find("schema");
    if (schema == document.end() || !schema->is_string() || schema->get<std::string>() != kSchema)
        throw InputError(origin, "schema", std::string("expected \"") + kSchema + "\"");
    const auto records = document.find("records");
    if (records == document.end() || !records->is_array()) throw InputError(origin, "records", "expected an array of records");
    for (const auto& item : document.items())
        if (item.key() != "schema" && item.key() != "records") throw InputError(origin, item.key(), "unknown key");
    std::vector<RunRecord> result;
    std::set<std::string> ids;
    const std::vector<CatalogEntry> policies = io::list_catalog(data_dir / "recompute");
    for (std::size_t i = 0; i < records->size(); ++i) {
        result.push_back(parse_record((*records)[i], origin, i, policies));
        if (!ids.insert(result.back().id).second)
            throw InputError(origin, "record " + result.back().id, "id used twice");
    }
    return result;
}

}  // namespace ridgeline
