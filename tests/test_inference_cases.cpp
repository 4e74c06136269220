// Every case of the scaling book's reference set on inference (decode, sharding, memory,
// prefill, throughput, the serving engine) computed through Ridgeline's inference functions from
// the case's inputs; expected value and tolerance come from the case. (KV-cache and MoE cases are
// checked with the foundation topics in test_scaling_book_cases.cpp.)
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/scaling_rules.hpp"
#include "hardware/catalog.hpp"
#include "inference/serving_rules.hpp"
#include "model/training_state.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

const std::set<std::string> kTopics = {"inference_decode",     "inference_sharding", "inference_memory",
                                       "inference_prefill",    "inference_throughput", "inference_engine"};

double num(const json& inputs, const char* key) { return inputs.at(key).get<double>(); }

// Decode step of a dense model with `param_bytes` of weights (bf16 unless `params` is given),
// `kv_bytes` of KV cache for the batch, on `chips` chips.
double decode_step_s(const json& in, double param_bytes, double params, double kv_bytes, double batch) {
    const double peak = in.contains("bf16_flops_per_s")
                            ? num(in, "bf16_flops_per_s")
                            : resolve_hardware("tpu-v5e", test::source_dir()).chip.peak_flops(Dtype::bf16);
    return decode_step_lower_bound_s({2.0 * params * batch, param_bytes, kv_bytes, num(in, "chips"),
                                      num(in, "hbm_bw_bytes_per_s"), peak});
}

// The book's LLaMA-2 13B cases: bf16 weights, KV cache per sequence given.
double llama2_13b_step_s(const json& in) {
    const double param_bytes = num(in, "param_bytes");
    return decode_step_s(in, param_bytes, param_bytes / 2.0, num(in, "kv_bytes_per_seq") * num(in, "batch"), num(in, "batch"));
}

double inf_01_02(const json& in) {
    const double kv = num(in, "batch") * num(in, "context") * num(in, "kv_bytes_per_token");
    return decode_step_s(in, num(in, "params") * num(in, "param_bytes"), num(in, "params"), kv, num(in, "batch")) * 1e3;
}

// Sequence length where prefill self-attention (queries = keys = T) reaches the chip's ridge.
double attention_critical_len(double hbm_intensity) {
    double low = 1, high = 1e7;
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (low + high);
        (attention_traffic(mid, mid, 1, 1, 128, 2).intensity_flops_per_byte() < hbm_intensity ? low : high) = mid;
    }
    return 0.5 * (low + high);
}

const std::map<std::string, test::CaseFunction>& case_functions() {
    static const std::map<std::string, test::CaseFunction> functions = {
        // --- decode ---
        {"inf-01", inf_01_02},
        {"inf-02", inf_01_02},
        {"inf-05", [](const json& in) { return llama2_13b_step_s(in) * 1e3; }},
        {"inf-06", [](const json& in) { return decode_tokens_per_s(num(in, "batch"), llama2_13b_step_s(in)); }},
        {"inf-07", [](const json& in) { return llama2_13b_step_s(in) * 1e3; }},
        {"inf-12", [](const json& in) { return hbm_read_s(num(in, "param_bytes"), num(in, "chips"), num(in, "hbm_bw_bytes_per_s")) * 1e3; }},
        {"inf-18", [](const json& in) {
             return hbm_read_s(num(in, "params") * num(in, "dtype_bytes"), num(in, "chips"), num(in, "hbm_bw_bytes_per_s")) * 1e6;
         }},
        {"ainf-04", [](const json& in) { return hbm_read_s(num(in, "total_bytes"), num(in, "chips"), num(in, "hbm_bw_bytes_per_s")) * 1e3; }},
        {"ainf-05", [](const json& in) { return decode_tokens_per_s(num(in, "batch"), num(in, "step_s")) / num(in, "chips"); }},
        {"ainf-08", [](const json& in) { return hbm_read_s(num(in, "hbm_bytes"), 1, num(in, "hbm_bw_bytes_per_s")) * 1e3; }},
        // --- sharding ---
        {"inf-08", [](const json& in) {
             // beta = W_hbm / W_ici: an ICI link of bandwidth 1 against HBM of bandwidth beta.
             return decode_model_parallel_limit(num(in, "F"), num(in, "B"), num(in, "beta_hbm_over_ici"), 1.0);
         }},
        {"inf-16", [](const json& in) { return weight_stationary_2d_min_chips(num(in, "F_over_D")); }},
        {"ainf-11", [](const json& in) { return tensor_parallel_max_degree(num(in, "F"), num(in, "C_over_W"), num(in, "M_Y")); }},
        {"ainf-12", [](const json& in) {
             return activation_transfer_s(num(in, "B"), num(in, "D"), num(in, "dtype_bytes"), num(in, "ici_bidir_bytes_per_s")) * 1e6;
         }},
        {"ainf-13", [](const json& in) {
             return hbm_read_s(num(in, "D") * num(in, "F") * num(in, "dtype_bytes"), num(in, "chips"), num(in, "hbm_bw_bytes_per_s")) * 1e6;
         }},
        // --- memory ---
        {"inf-11", [](const json& in) {
             return max_sequences_that_fit(num(in, "hbm_total_bytes") - num(in, "param_bytes"),
                                           num(in, "kv_bytes_per_token") * num(in, "seq_len"));
         }},
        {"ainf-02", [](const json& in) {
             return chips_to_hold(serving_memory_bytes(num(in, "param_bytes"), num(in, "kv_bytes_per_token"), num(in, "seq_len"),
                                                       num(in, "batch")),
                                  num(in, "hbm_bytes"));
         }},
        {"ainf-03", [](const json& in) {
             return serving_memory_bytes(num(in, "param_bytes"), num(in, "kv_bytes_per_token"), num(in, "seq_len"), num(in, "batch")) / 1e9;
         }},
        {"ainf-06", [](const json& in) {
             return chips_to_hold(serving_memory_bytes(num(in, "params") * num(in, "dtype_bytes"), 0, 0, 0), num(in, "hbm_bytes"));
         }},
        {"ainf-07", [](const json& in) {
             return max_sequences_that_fit(num(in, "free_bytes"), num(in, "kv_bytes_per_token") * num(in, "seq_len"));
         }},
        // --- prefill ---
        {"inf-03", [](const json& in) { return attention_critical_len(num(in, "hbm_intensity")); }},
        {"ainf-14", [](const json& in) {
             return prefill_time_s(num(in, "params"), num(in, "tokens"), num(in, "chips"), num(in, "bf16_flops_per_s"), num(in, "mfu"));
         }},
        // --- throughput ---
        {"ainf-09", [](const json& in) {
             return queries_per_s_per_chip(num(in, "batch"), num(in, "step_s"), num(in, "decode_len"), num(in, "chips"));
         }},
        {"ainf-10", [](const json& in) {
             return queries_per_s_per_chip(num(in, "batch"), num(in, "step_s"), num(in, "decode_len"), num(in, "chips"));
         }},
        // --- serving engine ---
        {"ainf-15", [](const json& in) { return kv_tokens_freed_per_step(num(in, "B"), num(in, "P"), num(in, "G")); }},
        {"ainf-16", [](const json& in) {
             return prefill_servers_per_decode_server(num(in, "prefill_s"), num(in, "step_s"), num(in, "batch"), num(in, "decode_len"));
         }},
    };
    return functions;
}

}  // namespace

TEST_CASE("scaling-book reference cases on inference") {
    const int checked = test::check_reference_cases(kTopics, case_functions());
    CHECK(checked == 26);
    CHECK(checked == static_cast<int>(case_functions().size()));
}
