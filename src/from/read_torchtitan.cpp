#include "from/read_torchtitan.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>

#include "core/error.hpp"
#include "emit/torchtitan_split.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"

namespace ridgeline {

namespace {

using Int = std::int64_t;
std::string text(Int value) { return std::to_string(value); }

bool same_shape(const ModelSpec& a, const ModelSpec& b) {
    return a.n_layers == b.n_layers && a.d_model == b.d_model && a.n_heads == b.n_heads && a.n_kv_heads == b.n_kv_heads && a.d_ff == b.d_ff &&
           a.vocab_size == b.vocab_size && a.moe.has_value() == b.moe.has_value();
}

// The pipeline: torchtitan's stages from its layers per stage and the weights of the embedding
// and output, each rank's layers (rank r holds stages r, r + pp, ...), the micro-batch size.
void read_pipeline(const SettingReader& r, Int layers, Int pp, LaunchConfig& c) {
    const PipelineSchedule schedule = *parse_schedule(r.s.at("schedule"));
    const bool looped = schedule == PipelineSchedule::interleaved;
    const auto per_stage = r.opt("layers_per_stage");
    const Int first = r.whole("first_stage_less_layers", 0), last = r.whole("last_stage_less_layers", 0);
    const Int stages = torchtitan_stage_count(pp, looped, per_stage, layers, first, last);
    if (stages % pp != 0) r.fail("layers_per_stage", text(stages) + " stages do not split over the " + text(pp) + " pipeline ranks");
    const Int vpp = stages / pp;
    if (looped != (vpp > 1))
        r.fail(per_stage ? "layers_per_stage" : "schedule", text(vpp) + " stages a rank, and " + r.s.at("schedule") + (looped ? " needs 2 or more" : " holds one"));
    const auto split = torchtitan_stage_layers(stages, layers, first, last);
    if (!split)
        r.fail("first_stage_less_layers", "torchtitan refuses to split " + text(layers) + " layers into " + text(stages) + " stages with the embedding weighing " +
                                              text(first) + " and the output " + text(last) + " layers");
    const std::vector<Int> ranks = layers_per_rank(*split, pp);
    if (!std::all_of(ranks.begin(), ranks.end(), [&](Int n) { return n == ranks.front(); })) c.knobs.fix(&Plan::stage_layers, ranks);
    c.knobs.fix(&Plan::vpp, vpp);
    c.knobs.fix(&Plan::schedule, schedule);
}

}  // namespace

LaunchConfig read_torchtitan(const SettingReader& r, const ModelSpec& model, Int chips, const std::filesystem::path& data_dir) {
    LaunchConfig c;
    c.file = r.file;
    if (r.has("model") && r.s.at("model") != model.name && !same_shape(resolve_model(r.s.at("model"), data_dir), model))
        r.fail("model", "the file trains " + r.s.at("model") + " (model.name and model.flavor), whose shape differs from --model " + model.name);
    if (chips <= 0) throw InputError("--chips", "", "required with --from torchtitan: a job file does not say how many GPUs run it");
    const Int tp = r.opt("tp").value_or(1), pp = r.opt("pp").value_or(1), cp = r.opt("cp").value_or(1), replicate = r.whole("dp_replicate");
    const Int others = replicate * cp * tp * pp;
    Int shard = r.whole("dp_shard", -1);
    if (shard == 0) r.fail("dp_shard", "expected a degree of 1 or more, or -1 (the ranks the other degrees leave)");
    if (shard == -1) {
        if (chips % others != 0) r.fail("dp_shard", "dp_replicate x cp x tp x pp (" + text(others) + ") does not divide the " + text(chips) + " GPUs (--chips)");
        shard = chips / others;
    } else if (others * shard != chips) {
        r.fail("dp_shard", "dp_replicate x dp_shard x cp x tp x pp = " + text(others * shard) + " GPUs; --chips says " + text(chips));
    }
    c.degrees.tp = tp;
    c.degrees.pp = pp;
    c.degrees.cp = cp;
    c.degrees.fsdp = shard;
    c.degrees.dp = replicate * shard;
    c.knobs.fix(&Plan::zero, shard > 1 ? 3 : 0);  // FSDP2 shards weights, gradients and optimizer state; DDP nothing
    const std::string reshard = r.s.at("reshard");
    if (shard > 1) c.knobs.fix(&Plan::reshard_after_forward, reshard == "true" || (reshard == "default" && pp == 1));
    c.knobs.fix(&Plan::overlap, true);  // FSDP2 prefetching, DDP buckets
    c.knobs.fix(&Plan::sequence_parallel, tp > 1);  // apply_tp: SequenceParallel on the norms
    // torch.compile reaches the model only where compile.components names it (the loss alone fuses nothing Ridgeline prices).
    std::istringstream components(r.s.at("compile_components"));
    const std::istream_iterator<std::string> end;
    const bool compile = r.on("compile") && std::find(std::istream_iterator<std::string>(components), end, "model") != end;
    c.stack = compile ? "torchtitan" : "pytorch-eager";
    c.knobs.fix(&Plan::tp_overlap, r.on("async_tp"));
    if (c.knobs.plan.tp_overlap && (!compile || tp == 1)) r.fail("async_tp", "torchtitan overlaps tensor-parallel communication only with compile.enable, \"model\" in compile.components and tp > 1");
    // Expert ranks: carved from dp_shard x cp x tp / etp (parallel_dims.py sparse mesh).
    const Int ep = r.opt("ep").value_or(1);
    if (ep > 1) {
        const Int etp = r.opt("etp").value_or(1);
        if (etp != 1 && etp != tp) r.fail("etp", "torchtitan supports expert tensor parallelism 1 or the tensor-parallel degree (" + text(tp) + ")");
        if ((shard * cp * (tp / etp)) % ep != 0)
            r.fail("ep", "does not divide dp_shard x cp x tp / etp = " + text(shard * cp * (tp / etp)) + " ranks, which torchtitan carves expert ranks from");
        c.degrees.ep = ep;
        c.knobs.fix(&Plan::etp, etp);
        c.knobs.fix(&Plan::fold_experts, true);
    }
    if (r.has("moe_dispatcher")) c.knobs.fix(&Plan::moe_dispatcher, r.s.at("moe_dispatcher"));
    const Int local = r.whole("local_batch");
    Int micro = local;
    if (pp > 1) {
        read_pipeline(r, model.n_layers, pp, c);
        micro = r.whole("pp_microbatch");
        if (local % micro != 0) r.fail("pp_microbatch", "does not divide training.local_batch_size " + text(local));
    } else if (r.s.count("layers_per_stage") != 0) {
        r.fail("layers_per_stage", "a pipeline setting, and pipeline_parallel_degree is 1");
    }
    const Int given_global = r.whole("global_batch", -1);
    const Int dp = replicate * shard;
    if (given_global == 0 || (given_global > 0 && given_global % (local * dp) != 0))
        r.fail("global_batch", "expected -1 or a multiple of local_batch_size x " + text(dp) + " data-parallel ranks (" + text(local * dp) + ")");
    c.global_batch_seqs = static_cast<double>(given_global > 0 ? given_global : local * dp);
    c.knobs.fix(&Plan::micro_batch_seqs, static_cast<double>(micro));
    c.seq_len = static_cast<double>(r.whole("seq_len"));
    if (!r.has("recompute"))
        r.fail("recompute", "torchtitan's default, selective with selective_ac_option \"2\" (every second layer recomputed whole), is no policy Ridgeline "
                            "models: give mode \"none\", \"full\", or \"selective\" with selective_ac_option \"op\"");
    c.recompute = r.s.at("recompute");
    c.recompute_key = r.key("recompute");
    c.knobs.fix(&Plan::precision, *parse_dtype(r.s.at("precision")));
    if (r.on("cpu_offload")) r.fail("cpu_offload", "moves parameters and gradients to the host as well as the optimizer state; Ridgeline offloads the optimizer only");
    c.knobs.fix(&Plan::ep_overlap, false);
    c.knobs.fix(&Plan::offload_optimizer, false);
    c.knobs.fix(&Plan::mtp_depth, 0);  // torchtitan v0.2.2 trains no multi-token prediction module
    return c;
}

}  // namespace ridgeline
