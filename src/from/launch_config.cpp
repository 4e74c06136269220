#include "from/launch_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "emit/emitter_file.hpp"
#include "io/quantity_text.hpp"
#include "model/recompute_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "from/read_torchtitan.hpp"
#include "from/setting_reader.hpp"
#include "stack/stack_file.hpp"
#include "model/plausible_sizes.hpp"

namespace ridgeline {

namespace {

using Int = std::int64_t;
using Settings = std::map<std::string, std::string>;

// Equal as text, or as numbers where both are (MaxText's capacity_factor -1.0 is -1).
bool same_value(const std::string& a, const std::string& b) {
    if (a == b) return true;
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
    return !a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0' && x == y;
}

}  // namespace

Settings match_settings(const EmitterSpec& spec, const LaunchEntries& in) {
    std::map<std::string, std::string> present;
    for (const EmitEntry& e : in.entries)
        if (!present.emplace(e.key, e.value.text).second) throw InputError(in.file, e.key, "given twice");
    const auto lookup = [&](const std::string& key) -> std::optional<std::string> {
        if (const auto it = in.unknown.find(key); it != in.unknown.end())
            throw InputError(in.file, key, "its value is not known without running the script: " + it->second);
        if (const auto it = present.find(key); it != present.end()) return it->second;
        if (const auto it = spec.read_defaults.find(key); it != spec.read_defaults.end()) return it->second.text;
        return std::nullopt;
    };
    std::set<std::string> consumed;
    Settings out;
    for (const auto& entry : spec.settings) {
        const std::string& id = entry.first;  // named, not bound: lambdas below capture them
        const EmitSetting& setting = entry.second;
        if (!setting.key.empty()) {
            if (const auto value = lookup(setting.key)) out[id] = *value;
            consumed.insert(setting.key);
            continue;
        }
        // The most specific choice whose every key has its value (given, or the framework's default).
        const std::string* best = nullptr;
        std::size_t best_size = 0;
        bool tie = false;
        for (const auto& [name, entries] : setting.choices) {
            bool all = true;
            for (const EmitEntry& e : entries) all = all && lookup(e.key) == e.value.text;
            if (!all) continue;
            if (best == nullptr || entries.size() > best_size) {
                best = &name;
                best_size = entries.size();
                tie = false;
            } else if (entries.size() == best_size) {
                tie = true;
            }
        }
        const std::set<std::string> keys = choice_keys(setting);
        const auto refuse = [&](const std::string& key) {
            std::string names;
            for (const auto& [name, entries] : setting.choices) names += (names.empty() ? "" : ", ") + name;
            throw InputError(in.file, key, "\"" + present[key] + "\" with the keys beside it is no " + id + " setting Ridgeline reads (" + spec.file +
                                               " maps the " + id + " choices " + names + ")");
        };
        if (best == nullptr || tie) {  // the file does not decide it, unless a key says otherwise
            for (const std::string& key : keys)
                if (present.count(key) != 0) refuse(key);
            continue;
        }
        for (const std::string& key : keys) {
            if (present.count(key) == 0) continue;
            bool in_choice = false;
            for (const EmitEntry& e : setting.choices.at(*best)) in_choice = in_choice || e.key == key;
            const auto only = setting.read_only_with.find(key);
            const bool unread = only != setting.read_only_with.end() && lookup(only->second.key) != only->second.value.text;
            if (!in_choice && !unread) refuse(key);
            consumed.insert(key);
        }
        out[id] = *best;
    }
    for (const auto& [key, neutral] : spec.neutral_values) {
        const auto it = present.find(key);
        if (it == present.end()) continue;
        if (!same_value(it->second, neutral.first.text))
            throw InputError(in.file, key, "\"" + it->second + "\" changes what Ridgeline models: it reads this key only as " + neutral.first.text + " (" + neutral.second + ")");
        consumed.insert(key);
    }
    // Every unread key at once: a real file has many, and finding them one run at a time is slow.
    std::vector<std::string> unread;
    for (const EmitEntry& e : in.entries)
        if (consumed.count(e.key) == 0 && spec.ignored.count(e.key) == 0) unread.push_back(e.key);
    if (!unread.empty()) {
        std::string others;
        for (std::size_t i = 1; i < unread.size(); ++i) others += (i > 1 ? ", " : "") + unread[i];
        throw InputError(in.file, unread.front(),
                         std::string("not a setting Ridgeline reads") + (others.empty() ? "" : " (nor are " + others + ")") + "; " + spec.file +
                             " names the settings it reads and, under \"ignored\", those that change nothing it models");
    }
    return out;
}

namespace {

// Layers of each pipeline rank from Megatron's first/last stage counts, the rest even. Or, with
// --account-for-embedding/loss-in-pipeline-split, the embedding and the loss each weigh one layer
// in an even split (arguments.py validate_args: (layers + 1 + 1) must divide by pp), so the first
// and last stages hold one transformer layer fewer.
std::vector<Int> uneven_stages(const SettingReader& r, Int layers, Int pp) {
    auto first = r.opt("first_stage_layers"), last = r.opt("last_stage_layers");
    const bool embedding = r.on("embedding_in_split"), loss = r.on("loss_in_split");
    if (embedding || loss) {
        const std::string id = embedding ? "embedding_in_split" : "loss_in_split";
        if (first || last) r.fail(id, "Megatron-LM splits the layers by these or by --decoder-first/last-pipeline-num-layers, not both");
        if (r.has("vpp_layers") || r.has("vpp")) r.fail(id, "with virtual pipeline stages: Ridgeline prices uneven stages without interleaving");
        const Int slots = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
        if (slots % pp != 0)
            r.fail(id, std::to_string(layers) + " layers with the embedding and loss counted (" + std::to_string(slots) + ") do not divide by pp " + std::to_string(pp));
        if (pp < 2) return {};
        if (embedding) first = slots / pp - 1;
        if (loss) last = slots / pp - 1;
    }
    if (!first && !last) return {};
    if (pp < 2) r.fail(first ? "first_stage_layers" : "last_stage_layers", "an uneven pipeline split needs 2 or more stages (pp " + std::to_string(pp) + ")");
    const Int ends = (first ? 1 : 0) + (last ? 1 : 0), rest_stages = pp - ends;
    const Int rest = layers - first.value_or(0) - last.value_or(0);
    if (rest < 0 || (rest_stages == 0 && rest != 0) || (rest_stages > 0 && (rest % rest_stages != 0 || rest == 0)))
        r.fail(first ? "first_stage_layers" : "last_stage_layers",
               "the model's " + std::to_string(layers) + " layers do not split into the first/last stage counts and " + std::to_string(rest_stages) +
                   " even middle stages");
    std::vector<Int> stages(static_cast<std::size_t>(pp), rest_stages > 0 ? rest / rest_stages : 0);
    if (first) stages.front() = *first;
    if (last) stages.back() = *last;
    return stages;
}

// The model's shape where the file gives it: it must be --model's. An expert count of 1 or less is
// a dense model (MaxText's num_experts: 1), and a width of -1 the dense one (base_moe_mlp_dim).
void check_model_shape(const SettingReader& r, const ModelSpec& model) {
    const auto check = [&](const char* id, Int expected, const char* what) {
        if (r.has(id) && r.whole(id, -1) != expected)
            r.fail(id, "the file's " + r.s.at(id) + " " + what + " contradict the model's " + std::to_string(expected) + " (--model " + model.name + ")");
    };
    check("layers", model.n_layers, "layers");
    check("d_model", model.d_model, "hidden size");
    check("d_ff", model.d_ff, "FFN width");
    check("heads", model.n_heads, "attention heads");
    check("kv_heads", model.n_kv_heads, "key/value heads");
    check("vocab", model.vocab_size, "vocabulary entries");
    if (r.on("gqa")) check("kv_groups", model.n_kv_heads, "query groups");
    if (!model.mla) check("head_dim", model.head_dim, "channels a head");
    if (model.moe) {
        check("experts", model.moe->n_experts, "experts");
        check("top_k", model.moe->top_k, "experts a token");
        const bool dense_width = r.has("d_ff_expert") && r.whole("d_ff_expert", -1) == -1;
        if (!dense_width || model.moe->d_ff_expert != model.d_ff) check("d_ff_expert", model.moe->d_ff_expert, "expert FFN width");
    } else if (r.has("experts") && r.whole("experts", 0) > 1) {
        r.fail("experts", "the file's " + r.s.at("experts") + " experts contradict the dense model " + model.name + " (--model)");
    }
}

// `chips` from the command line, else `launched` (what a launch script's launcher starts).
LaunchConfig megatron(const SettingReader& r, const ModelSpec& model, Int chips, Int launched) {
    LaunchConfig c;
    c.file = r.file;
    const Int layers = model.n_layers;
    check_model_shape(r, model);
    if (chips <= 0 && launched <= 0)
        throw InputError("--chips", "", "required with --from megatron: the file does not say how many GPUs run it (a launch script's "
                                        "torchrun --nproc_per_node x --nnodes, srun --ntasks or mpirun -np would)");
    const bool from_script = chips <= 0;
    if (from_script) chips = launched;
    const Int tp = r.opt("tp").value_or(1), pp = r.opt("pp").value_or(1), cp = r.opt("cp").value_or(1), ep = r.opt("ep").value_or(1);
    if (chips % (tp * pp * cp) != 0)
        r.fail("tp", "tp " + std::to_string(tp) + " x pp " + std::to_string(pp) + " x cp " + std::to_string(cp) + " does not divide the " +
                         std::to_string(chips) + (from_script ? " GPUs the script launches" : " GPUs (--chips)"));
    const Int dp = chips / (tp * pp * cp);
    c.degrees.tp = tp;
    c.degrees.pp = pp;
    c.degrees.cp = cp;
    if (ep > 1) {
        c.degrees.ep = ep;
        c.knobs.fix(&Plan::fold_experts, true);  // Megatron-Core carves expert ranks from tensor, context, then data ranks
    }
    if (const auto etp = r.opt("etp")) c.knobs.fix(&Plan::etp, *etp);
    const std::vector<Int> stage_layers = uneven_stages(r, layers, pp);
    if (!stage_layers.empty()) c.knobs.fix(&Plan::stage_layers, stage_layers);
    std::optional<Int> virtual_stages;
    if (r.has("vpp_layers")) {
        const Int per = r.whole("vpp_layers");
        if (!stage_layers.empty()) r.fail("vpp_layers", "with uneven first/last stages Megatron-Core takes --num-virtual-stages-per-pipeline-rank");
        if (layers % (pp * per) != 0)
            r.fail("vpp_layers", std::to_string(layers) + " layers do not split into " + std::to_string(pp) + " stages of virtual stages of " + std::to_string(per));
        virtual_stages = layers / (pp * per);
    }
    if (r.has("vpp")) {
        const Int vpp = r.whole("vpp");
        if (virtual_stages && *virtual_stages != vpp)
            r.fail("vpp", "contradicts --num-layers-per-virtual-pipeline-stage (" + std::to_string(*virtual_stages) + " virtual stages)");
        virtual_stages = vpp;
    }
    if (virtual_stages) c.knobs.fix(&Plan::vpp, *virtual_stages);
    if (virtual_stages && *virtual_stages > 1 && pp == 1) r.fail(r.has("vpp") ? "vpp" : "vpp_layers", "virtual pipeline stages need pipelining (pp > 1)");
    if (r.has("seq_len")) c.seq_len = static_cast<double>(r.whole("seq_len"));
    // arguments.py validate_args turns sequence parallelism off where tp is 1 (it would change only the numerics).
    c.knobs.fix(&Plan::sequence_parallel, r.on("sp") && tp > 1);
    const auto micro = r.opt("micro_batch"), global = r.opt("global_batch");
    if (micro) c.knobs.fix(&Plan::micro_batch_seqs, static_cast<double>(*micro));
    if (global) {
        if (micro && *global % (*micro * dp) != 0)
            r.fail("global_batch", "not a multiple of micro-batch " + std::to_string(*micro) + " x " + std::to_string(dp) + " data-parallel ranks");
        c.global_batch_seqs = static_cast<double>(*global);
    } else if (micro) {
        c.global_batch_seqs = static_cast<double>(*micro * dp);  // arguments.py validate_args: micro-batch x data-parallel size
    }
    if (r.has("recompute")) {
        c.recompute = r.s.at("recompute");
        c.recompute_key = r.key("recompute");
    }
    const int zero = r.has("zero") ? std::stoi(r.s.at("zero")) : 0;
    c.knobs.fix(&Plan::zero, zero);
    if (zero == 3) c.degrees.fsdp = dp;  // Megatron FSDP shards over the whole data-parallel group
    const bool grad = r.on("overlap_grad_reduce"), param = r.on("overlap_param_gather");
    if (param && (!grad || zero == 0))
        r.fail("overlap_param_gather", "Megatron-Core overlaps the parameter gather only with --overlap-grad-reduce and a distributed optimizer or Megatron FSDP");
    c.knobs.fix(&Plan::overlap, grad);
    c.knobs.fix(&Plan::tp_overlap, r.on("tp_overlap"));
    if (c.knobs.plan.tp_overlap && (!c.knobs.plan.sequence_parallel || tp == 1)) r.fail("tp_overlap", "Megatron-Core overlaps tensor-parallel communication only with --sequence-parallel and tp > 1");
    if (r.has("precision")) c.knobs.fix(&Plan::precision, *parse_dtype(r.s.at("precision")));
    if (r.has("moe_dispatcher")) c.knobs.fix(&Plan::moe_dispatcher, r.s.at("moe_dispatcher"));
    c.knobs.fix(&Plan::ep_overlap, r.on("ep_overlap"));
    if (r.has("mtp_depth")) c.knobs.fix(&Plan::mtp_depth, r.whole("mtp_depth", 0));
    c.knobs.fix(&Plan::offload_optimizer, r.has("offload_optimizer"));
    c.chips = from_script ? chips : 0;
    return c;
}


constexpr Int kMaxDevices = kMaxChips;

LaunchConfig maxtext(const SettingReader& r, const ModelSpec& model, Int chips) {
    check_model_shape(r, model);
    const Int layers = model.n_layers;
    LaunchConfig c;
    c.file = r.file;
    // Each axis's size over the chips' own links (ici) times the network between slices (dcn). As
    // in MaxText, each level may leave one axis at -1: the ICI axes fill a slice's devices, the DCN
    // axes the slices. MaxText counts the slices on the devices it runs on; here a DCN -1 takes
    // the chips the ICI axes leave when those are all given, else one slice's share (1: Ridgeline
    // shapes one slice unless the DCN sizes say more).
    std::map<std::string, Int> size;
    std::map<std::string, std::string> auto_id;  // level -> the axis left at -1
    std::map<std::string, Int> known = {{"ici.", 1}, {"dcn.", 1}};
    for (const char* axis : {"data", "fsdp", "expert", "tensor", "context", "pipeline"}) {
        size[axis] = 1;
        for (const char* level : {"ici.", "dcn."}) {
            const std::string id = level + std::string(axis);
            if (!r.has(id)) continue;
            const Int v = r.whole(id, -1);
            if (v == 0) r.fail(id, "expected a size of 1 or more, or -1 (the devices the other axes leave)");
            if (v > 0) {
                if (v > kMaxDevices || known[level] > kMaxDevices / v) r.fail(id, "the axes multiply past " + std::to_string(kMaxDevices) + " devices");
                size[axis] *= v;
                known[level] *= v;
                continue;
            }
            if (auto_id.count(level) != 0)
                r.fail(id, "both " + r.key(auto_id[level]) + " and this are -1 (auto): one axis of each level may be");
            auto_id[level] = id;
        }
    }
    Int slices = known["dcn."];
    if (auto_id.count("dcn.") != 0 && auto_id.count("ici.") == 0 && chips > 0) {
        const std::string& id = auto_id["dcn."];
        if (chips % (known["ici."] * slices) != 0)
            r.fail(id, "the other axes (" + std::to_string(known["ici."] * slices) + " devices) do not divide the " + std::to_string(chips) + " chips");
        size[id.substr(4)] *= chips / (known["ici."] * slices);
        slices = chips / known["ici."];
    }
    Int total = known["ici."] * slices;
    if (auto_id.count("ici.") != 0) {
        const std::string& id = auto_id["ici."];
        if (chips <= 0) throw InputError("--chips", "", "required: " + r.file + " leaves " + r.key(id) + " at -1 (the devices the other axes leave)");
        if (chips % (known["ici."] * slices) != 0)
            r.fail(id, "the other axes (" + std::to_string(known["ici."]) + " devices in each of " + std::to_string(slices) +
                           " slices) do not divide the " + std::to_string(chips) + " chips");
        size[id.substr(4)] *= chips / (known["ici."] * slices);
        total = chips;
    }
    if (chips > 0 && total != chips)
        throw InputError(r.file, "ici_*_parallelism x dcn_*_parallelism", "the axes multiply to " + std::to_string(total) + " devices; --chips says " + std::to_string(chips));
    c.chips = total;
    const Int pp = size["pipeline"], dp = size["data"] * size["fsdp"] * size["expert"];
    c.degrees.tp = size["tensor"];
    c.degrees.pp = pp;
    c.degrees.cp = size["context"];
    c.degrees.ep = size["expert"];
    c.degrees.fsdp = size["fsdp"];
    c.degrees.dp = dp;
    if (r.has("seq_len")) c.seq_len = static_cast<double>(r.whole("seq_len"));
    if (r.has("per_device_batch")) {
        const double global = r.number("per_device_batch") * static_cast<double>(total);
        if (global < 1 || global != std::floor(global))
            r.fail("per_device_batch", r.s.at("per_device_batch") + " x " + std::to_string(total) + " devices is not a whole number of sequences");
        if (global > kMaxBatchSequences) r.fail("per_device_batch", r.s.at("per_device_batch") + " x " + std::to_string(total) + " devices is past 1e12 sequences a step");
        c.global_batch_seqs = global;
    }
    // Micro-batches: the pipeline's, or gradient accumulation's without one.
    std::optional<Int> microbatches;
    std::string micro_id;
    const Int repeats = r.opt("pipeline_repeats").value_or(1);
    if (pp > 1) {
        if (r.has("stage_layers") && pp * r.whole("stage_layers") * repeats != layers)
            r.fail("stage_layers", std::to_string(pp) + " stages x " + r.s.at("stage_layers") + " layers x " + std::to_string(repeats) +
                                       " repeats contradict the model's " + std::to_string(layers) + " layers (--model)");
        if (layers % (pp * repeats) != 0) r.fail("pipeline_repeats", std::to_string(layers) + " layers do not split into " + std::to_string(pp) + " stages x " + std::to_string(repeats) + " repeats");
        c.knobs.fix(&Plan::vpp, repeats);
        c.knobs.fix(&Plan::schedule, PipelineSchedule::gpipe);  // MaxText's pipeline (emitters/maxtext.json "schedule")
        if (r.has("pipeline_microbatches")) {
            microbatches = r.whole("pipeline_microbatches");
            micro_id = "pipeline_microbatches";
            if (*microbatches % pp != 0) r.fail(micro_id, "MaxText needs a multiple of the " + std::to_string(pp) + " pipeline stages");
        }
        if (r.has("gradient_accumulation")) r.fail("gradient_accumulation", "with pipelining the micro-batches are num_pipeline_microbatches");
    } else {
        for (const char* id : {"stage_layers", "pipeline_repeats", "pipeline_microbatches"})
            if (r.has(id) && !(std::string(id) == "pipeline_repeats" && repeats == 1)) r.fail(id, "a pipeline setting, and no axis is pipelined");
        if (r.has("gradient_accumulation")) {
            microbatches = r.whole("gradient_accumulation");
            micro_id = "gradient_accumulation";
        } else if (c.global_batch_seqs) {
            microbatches = 1;  // without accumulation a replica runs its whole batch at once
            micro_id = "per_device_batch";
        }
    }
    if (microbatches) {
        if (!c.global_batch_seqs) r.fail(micro_id, "needs per_device_batch_size");
        const double micro = *c.global_batch_seqs / static_cast<double>(dp * *microbatches);
        if (micro != std::floor(micro) || micro < 1)
            r.fail(micro_id, "the global batch of " + std::to_string(static_cast<Int>(*c.global_batch_seqs)) + " sequences does not split into " +
                                 std::to_string(*microbatches) + " micro-batches over " + std::to_string(dp) + " replicas");
        c.knobs.fix(&Plan::micro_batch_seqs, micro);
    }
    if (r.has("recompute")) {
        c.recompute = r.s.at("recompute");
        c.recompute_key = r.key("recompute");
    }
    if (r.has("zero_over_data")) {
        const int zero = std::stoi(r.s.at("zero_over_data"));
        if (size["fsdp"] > 1 && zero == 1) r.fail("zero_over_data", "optimizer sharding over data on top of fsdp is not a plan Ridgeline models");
        if (size["fsdp"] == 1) c.knobs.fix(&Plan::zero, zero);
    }
    if (r.has("precision")) c.knobs.fix(&Plan::precision, *parse_dtype(r.s.at("precision")));
    if (r.has("offload_optimizer")) c.knobs.fix(&Plan::offload_optimizer, r.on("offload_optimizer"));
    c.stack = "maxtext";  // on GPUs too, where its stack runs cuDNN attention (stacks/maxtext.json)
    // What MaxText has no setting for (emit_training.cpp refuses to write them): fixed off.
    c.knobs.fix(&Plan::sequence_parallel, false);
    c.knobs.fix(&Plan::tp_overlap, false);
    c.knobs.fix(&Plan::ep_overlap, false);
    return c;
}

// Each value (or list item) of the keys `renames` names, renamed where it says.
void rename_values(const std::map<std::string, std::map<std::string, std::string>>& renames, LaunchEntries& in) {
    for (EmitEntry& e : in.entries) {
        const auto values = renames.find(e.key);
        if (values == renames.end()) continue;
        std::istringstream items(e.value.text);
        std::string item, text;
        while (items >> item) {
            const auto renamed = values->second.find(item);
            text += (text.empty() ? "" : " ") + (renamed == values->second.end() ? item : renamed->second);
        }
        e.value.text = text;
    }
}

// A file in an earlier release's names (one of its old keys marks it) read in today's: keys and
// values renamed, so that one table of settings reads every release. A value alone marks nothing:
// torchtitan v0.2 refuses v0.1's converter name "float8", and so does Ridgeline in a v0.2 file.
void rename_older_version(const EmitterSpec& spec, LaunchEntries& in) {
    for (const EmitOlderVersion& older : spec.older_versions) {
        if (std::none_of(in.entries.begin(), in.entries.end(), [&](const EmitEntry& e) { return older.renamed_keys.count(e.key) != 0; })) continue;
        for (EmitEntry& e : in.entries) {
            const auto renamed = older.renamed_keys.find(e.key);
            if (renamed == older.renamed_keys.end()) continue;
            if (std::any_of(in.entries.begin(), in.entries.end(), [&](const EmitEntry& other) { return other.key == renamed->second; }))
                throw InputError(in.file, e.key, spec.framework + " " + older.version + "'s name for " + renamed->second + ", which the file gives as well");
            if (const auto unknown = in.unknown.extract(e.key)) in.unknown.emplace(renamed->second, unknown.mapped());
            e.key = renamed->second;
        }
        rename_values(older.renamed_values, in);
        return;
    }
}

// Megatron-Core's selective recomputation of a module list no recompute choice names (the
// modules in another order, or others): taken out of the entries as a "megatron-core: ..." policy.
std::optional<std::string> take_module_list(const EmitterSpec& spec, LaunchEntries& entries) {
    const auto entry = [&](const std::string& key) -> const EmitEntry* {
        for (const EmitEntry& e : entries.entries)
            if (e.key == key) return &e;
        return nullptr;
    };
    const EmitEntry* modules = entry("--recompute-modules");
    const EmitEntry* granularity = entry("--recompute-granularity");
    if (modules == nullptr || granularity == nullptr || granularity->value.text != "selective") return std::nullopt;
    if (const auto setting = spec.settings.find("recompute"); setting != spec.settings.end())
        for (const auto& [name, choice] : setting->second.choices)
            for (const EmitEntry& e : choice)
                if (e.key == "--recompute-modules" && e.value.text == modules->value.text) return std::nullopt;
    const std::string policy = std::string(kMegatronPolicyPrefix) + " " + modules->value.text;
    std::erase_if(entries.entries, [](const EmitEntry& e) { return e.key == "--recompute-modules" || e.key == "--recompute-granularity"; });
    return policy;
}

}  // namespace

LaunchConfig read_launch_config(const std::string& framework, const std::filesystem::path& path, const std::filesystem::path& data_dir,
                                const ModelSpec& model, Int chips) {
    const EmitterSpec spec = resolve_emitter(framework, data_dir, "--from");
    if (spec.job != EmitJob::training) throw InputError("--from", "", spec.name + " is a serving framework: train reads megatron, maxtext or torchtitan");
    LaunchEntries entries = spec.syntax == EmitSyntax::yaml   ? read_yaml_file(path)
                                  : spec.syntax == EmitSyntax::toml ? read_toml_file(path)
                                                                    : read_arguments_file(path);
    // Megatron-FSDP (v1) turns the distributed optimizer on itself (megatron/training/arguments.py
    // validate_args), so a script saying so as well means the same plan.
    const auto given = [&](const std::string& key) {
        return std::any_of(entries.entries.begin(), entries.entries.end(), [&](const EmitEntry& e) { return e.key == key; });
    };
    rename_older_version(spec, entries);
    rename_values(spec.value_aliases, entries);
    // --recompute-activations is Megatron-LM's shorthand for --recompute-granularity selective, which
    // it overrides (arguments.py validate_args).
    if (spec.name == "megatron" && given("--recompute-activations")) {
        std::erase_if(entries.entries, [](const EmitEntry& e) { return e.key == "--recompute-granularity"; });
        for (EmitEntry& e : entries.entries)
            if (e.key == "--recompute-activations") e = {"--recompute-granularity", {EmitValue::Kind::text, "selective"}};
    }
    const std::optional<std::string> module_policy = spec.name == "megatron" ? take_module_list(spec, entries) : std::nullopt;
    if (spec.name == "megatron" && given("--use-megatron-fsdp"))
        std::erase_if(entries.entries, [](const EmitEntry& e) { return e.key == "--use-distributed-optimizer"; });
    const Settings settings = match_settings(spec, entries);
    const SettingReader r{spec, settings, entries.file};
    LaunchConfig config = spec.name == "megatron"     ? megatron(r, model, chips, entries.processes)
                          : spec.name == "maxtext"    ? maxtext(r, model, chips)
                          : spec.name == "torchtitan" ? read_torchtitan(r, model, chips, data_dir)
                                                      : throw InputError("--from", "", "no reader for " + spec.name + " (megatron, maxtext, torchtitan)");
    if (module_policy) {
        config.recompute = *module_policy;
        config.recompute_key = "--recompute-modules";
    }
    for (const EmitEntry& e : entries.entries)
        if (spec.ignored.count(e.key) != 0 && std::find(config.ignored.begin(), config.ignored.end(), e.key) == config.ignored.end())
            config.ignored.push_back(e.key);
    return config;
}

std::string ignored_keys_note(const LaunchConfig& config, bool strict) {
    if (config.ignored.empty()) return "";
    std::string others;
    for (std::size_t i = 1; i < config.ignored.size(); ++i) others += (i > 1 ? ", " : "") + config.ignored[i];
    if (strict)
        throw InputError(config.file, config.ignored.front(),
                         "changes nothing Ridgeline models, and --strict refuses what it does not read" + (others.empty() ? "" : " (nor does it read " + others + ")"));
    return config.file + ": not read, as they change nothing Ridgeline models (--strict refuses them): " + config.ignored.front() +
           (others.empty() ? "" : ", " + others);
}

void apply_launch_config(const LaunchConfig& c, TrainingSetup& setup, const std::filesystem::path& data_dir) {
    if (c.chips > 0) setup.chips = c.chips;
    Plan& p = setup.plan;
    for (const DegreeField& d : kDegreeFields)
        if (c.degrees.*d.given) p.*d.value = *(c.degrees.*d.given);
    c.knobs.apply(p);
    if (c.seq_len) setup.seq_len = *c.seq_len;
    if (c.global_batch_seqs) setup.global_batch_seqs = *c.global_batch_seqs;
    if (c.stack) setup.stack = resolve_stack(*c.stack, data_dir);
    if (c.recompute) p.recompute = resolve_recompute(*c.recompute, data_dir, c.file, c.recompute_key);
}

SearchConstraints launch_constraints(const LaunchConfig& c) {
    const Plan& given = c.knobs.plan;
    if (!given.stage_layers.empty())
        throw InputError(c.file, "--decoder-first/last-pipeline-num-layers", "an uneven pipeline split: search train tries even splits only (train reads it)");
    if (given.fold_experts && c.degrees.ep.value_or(1) > 1 && (c.degrees.cp.value_or(1) > 1 || (given.etp == 1 && c.degrees.tp.value_or(1) > 1)))
        throw InputError(c.file, "--expert-model-parallel-size", "expert ranks folded into the context or tensor ranks: search train carves them from the data-parallel replicas only "
                                       "(train reads it)");
    SearchConstraints k;
    static_cast<GivenDegrees&>(k) = c.degrees;
    static_cast<GivenKnobs&>(k) = c.knobs;
    for (std::size_t i = 0; i < kPlanKnobs.size(); ++i)
        if (kPlanKnobs[i].search == InSearch::no) k.given.reset(i);  // the search takes the file's plan without them
    return k;
}

}  // namespace ridgeline
