// The scaling book's training cases (topics training_*), through Ridgeline's scaling rules and
// transformer math; expected value and tolerance from each case.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/scaling_rules.hpp"
#include "hardware/catalog.hpp"
#include "model/training_state.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using nlohmann::json;

namespace {

double num(const json& in, const char* key) { return in.at(key).get<double>(); }
constexpr double kSecondsPerDay = 86400.0;

const std::map<std::string, test::CaseFunction>& case_functions() {
    static const std::map<std::string, test::CaseFunction> functions = {
        {"tf-06", [](const json& in) {
             return 100.0 * achieved_mfu(six_n_training_flops(num(in, "active_params"), num(in, "tokens")),
                                         num(in, "gpu_hours") * 3600.0, num(in, "fp8_flops_per_s"));
         }},
        {"train-01", [](const json& in) {
             // The model whose training state exactly fills one chip: chips_to_hold(...) == 1.
             const double bytes_per_param = TrainingPrecision::bf16_params_fp32_moments().bytes_per_param();
             CHECK(bytes_per_param == num(in, "bytes_per_param"));
             return num(in, "hbm_bytes") / bytes_per_param;
         }},
        {"train-02", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "ici_bidir_bytes_per_s"));
         }},
        {"train-03", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "C_over_W"), 1, 1, 1, num(in, "axes")) * num(in, "chips");
         }},
        {"train-04", [](const json& in) { return num(in, "batch_tokens") / num(in, "per_chip_min"); }},
        {"train-05", [](const json& in) {
             return training_time_s(num(in, "total_flops"), num(in, "chips"), num(in, "bf16_flops_per_s"), num(in, "mfu")) / kSecondsPerDay;
         }},
        {"train-06", [](const json& in) { return num(in, "batch_tokens") / num(in, "per_chip_min"); }},
        {"train-07", [](const json& in) { return tensor_parallel_max_degree(num(in, "F"), num(in, "C_over_W"), num(in, "M_Y")); }},
        {"train-08", [](const json& in) { return tensor_parallel_min_d_ff(num(in, "Y"), num(in, "C_over_W")); }},
        {"train-09", [](const json& in) {
             return mixed_fsdp_optimal_degree(num(in, "B"), num(in, "F"), num(in, "N"), num(in, "M_X") / num(in, "M_Y"));
         }},
        {"train-10", [](const json& in) { return mixed_fsdp_tp_critical_tokens_per_chip(num(in, "alpha"), num(in, "F"), num(in, "M_X_M_Y")); }},
        {"train-11", [](const json& in) {
             return num(in, "N") * mixed_fsdp_tp_critical_tokens_per_chip(num(in, "alpha"), num(in, "F"), num(in, "M_X_M_Y"));
         }},
        {"train-12", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "dcn_bw_per_chip_bytes_per_s"));
         }},
        {"train-13", [](const json& in) { return num(in, "batch_tokens") / num(in, "per_chip_min"); }},
        {"train-14", [](const json& in) { return mixed_fsdp_tp_critical_tokens_per_chip(num(in, "alpha"), num(in, "F"), num(in, "M_X_M_Y")); }},
        {"train-17", [](const json& in) { return num(in, "chips") * num(in, "per_chip_min"); }},
        {"train-18", [](const json& in) { return mixed_fsdp_tp_critical_tokens_per_chip(num(in, "alpha"), num(in, "F"), 2); }},
        {"train-19", [](const json& in) {
             return mixed_fsdp_optimal_degree(num(in, "B"), num(in, "F"), num(in, "N"), num(in, "M_X_over_M_Y"));
         }},
        {"train-20", [](const json& in) {
             return training_time_s(six_n_training_flops(num(in, "params"), num(in, "batch_tokens")), num(in, "chips"),
                                    num(in, "bf16_flops_per_s"), num(in, "mfu")) * 1e3;
         }},
        {"atrain-02", [](const json& in) { return six_n_training_flops(num(in, "params"), num(in, "tokens")); }},
        {"atrain-03", [](const json& in) {
             return training_time_s(num(in, "total_flops"), 1, num(in, "bf16_flops_per_s"), 1) / (365.0 * kSecondsPerDay);
         }},
        {"atrain-04", [](const json& in) {
             return training_time_s(num(in, "total_flops"), num(in, "chips"), num(in, "bf16_flops_per_s"), num(in, "mfu")) / kSecondsPerDay;
         }},
        {"atrain-07", [](const json& in) { return num(in, "batch_tokens") / num(in, "chips"); }},
        {"atrain-08", [](const json& in) { return mixed_fsdp_tp_critical_tokens_per_chip(num(in, "alpha"), num(in, "F"), 2); }},
        {"atrain-09", [](const json& in) {
             return mixed_fsdp_optimal_degree(num(in, "B"), num(in, "F"), num(in, "N"), num(in, "M_X_over_M_Y"));
         }},
        {"atrain-11", [](const json& in) {
             return training_time_s(six_n_training_flops(num(in, "params"), num(in, "tokens")), num(in, "chips"),
                                    num(in, "bf16_flops_per_s"), num(in, "mfu")) / kSecondsPerDay;
         }},
        {"gpu-15", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "node_egress_bytes_per_s"));
         }},
        {"gpu-16", [](const json& in) { return num(in, "gpus") * num(in, "per_gpu_min"); }},
        {"gpu-17", [](const json& in) {
             return num(in, "gpus") * data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "nvlink_bytes_per_s"));
         }},
        {"gpu-19", [](const json& in) { return small_group_critical_tokens(num(in, "alpha"), num(in, "nodes")); }},
        {"gpu-20", [](const json& in) { return tensor_parallel_max_degree(num(in, "F"), num(in, "C_over_W")); }},
        {"gpu-21", [](const json& in) {
             return data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "node_egress_bytes_per_s"));
         }},
        {"gpu-22", [](const json& in) {
             return training_time_s(num(in, "total_flops"), num(in, "gpus"), num(in, "bf16_flops_per_s"), num(in, "mfu")) / kSecondsPerDay;
         }},
        {"gpu-24", [](const json& in) { return num(in, "batch_tokens") / num(in, "gpus"); }},
        {"gpu-25", [](const json& in) {
             // Model parallelism spanning P nodes multiplies the bandwidth each FSDP shard sees by P.
             return data_parallel_critical_tokens_per_chip(num(in, "bf16_flops_per_s"), num(in, "node_egress_bytes_per_s"), 1, 1,
                                                           num(in, "nodes_spanned"));
         }},
        {"gpu-26", [](const json& in) { return num(in, "sequences") * num(in, "seq_len") / num(in, "gpus"); }},
        {"gpu-28", [](const json& in) { return num(in, "sequences") * num(in, "seq_len") / num(in, "gpus"); }},
        {"gpu-30", [](const json& in) {
             return pipeline_activation_transfer_s(num(in, "B"), num(in, "D"), num(in, "W"), num(in, "N_MB"), num(in, "N_stages")) * 1e3;
         }},
    };
    return functions;
}

}  // namespace

TEST_CASE("scaling-book training cases") {
    const int checked = test::check_reference_cases({"training_dp", "training_fsdp", "training_tp", "training_mixed",
                                                     "training_pp", "training_dcn", "training_time"},
                                                    case_functions());
    CHECK(checked == 38);
}
