// Tensor-parallel collectives overlapped with GEMMs (--tp-overlap): hidden, they still keep SMs
// from the GEMMs beside them, as many as the stack's overlap configuration sets aside.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/roofline.hpp"
#include "hardware/catalog.hpp"
#include "model/model_catalog.hpp"
#include "scenario/training_setup.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using test::component_s;

namespace {

// LLaMA-3 8B on one DGX H100 node, tp 8 with sequence parallelism, one sequence per micro-batch.
TrainingSetup llama_tp8(const std::string& stack) {
    TrainingSetup setup;
    setup.model = resolve_model("llama3-8b", test::source_dir());
    setup.hardware = resolve_hardware("dgx-h100", test::source_dir());
    setup.chips = 8;
    setup.seq_len = 8192;
    setup.global_batch_seqs = 4;
    setup.plan.tp = 8;
    setup.plan.sequence_parallel = true;
    setup.plan.micro_batch_seqs = 1;
    setup.plan.tp_overlap = true;
    setup.stack = resolve_stack(stack, test::source_dir());
    return setup;
}

TrainingScenario scenario_of(const TrainingSetup& setup) { return build_training_scenario(setup, test::source_dir(), "test"); }

}  // namespace

TEST_CASE("overlapped tensor-parallel collectives keep their SMs from the GEMMs beside them: TE's defaults and NeMo's tuned configs") {
    const TrainingScenario scenario = scenario_of(llama_tp8("megatron-core"));
    const LayoutWork work = derive_layout_work(scenario);
    const MatmulDtypes dtypes{Dtype::bf16, Dtype::bf16, Dtype::bf16};
    // Row-parallel GEMMs (attention output, MLP down) reduce-scatter their output forward;
    // column-parallel ones (qkv, MLP up) reduce-scatter their input gradient backward.
    double row_fwd_s = 0, column_bwd_s = 0;
    for (const DerivedMatmul& m : work.dense.matmuls) {
        const Gemm gemm{m.rows, m.contract, m.cols, m.instances, m.weight_elements};
        if (m.name == "out" || m.name == "mlp_out") row_fwd_s += gemm_time(scenario.chip, gemm, dtypes).lower_bound_s();
        if (m.name == "qkv" || m.name == "mlp_in") column_bwd_s += gemm_backward_s(scenario.chip, gemm, dtypes);
        CHECK(m.output_reduced == (m.name == "out" || m.name == "mlp_out"));
        CHECK(m.input_gradient_reduced == (m.name == "qkv" || m.name == "mlp_in"));
    }
    REQUIRE(row_fwd_s > 0);
    REQUIRE(column_bwd_s > 0);
    // A GEMM left 132 - 16 of an H100's 132 SMs takes 132 / 116 of its time.
    const double margin = 16.0 / 116.0, layer_passes = 32.0 * 4;  // 32 layers, 4 micro-batches

    TrainingSetup none = llama_tp8("megatron-core");
    none.stack->tp_comm_sms_forward = 0;
    none.stack->tp_comm_sms_backward = 0;
    const double base_s = component_s(simulate_training(scenario_of(none)), "tensor-parallel comms (exposed)");
    const double te_s = component_s(simulate_training(scenario), "tensor-parallel comms (exposed)");
    const double nemo_s = component_s(simulate_training(scenario_of(llama_tp8("nemo"))), "tensor-parallel comms (exposed)");
    // Transformer Engine's defaults (Megatron-LM): 16 SMs forward and backward.
    CHECK(te_s - base_s == doctest::Approx(layer_passes * (row_fwd_s + column_bwd_s) * margin));
    // NeMo's recipes: the forward reduce-scatters keep 16, the backward bulk overlaps none.
    CHECK(nemo_s - base_s == doctest::Approx(layer_passes * row_fwd_s * margin));
    // Without the overlap nothing is set aside (the collectives are exposed instead).
    TrainingSetup serial = llama_tp8("megatron-core");
    serial.plan.tp_overlap = false;
    TrainingSetup serial_none = none;
    serial_none.plan.tp_overlap = false;
    CHECK(simulate_training(scenario_of(serial)).step_time_s == doctest::Approx(simulate_training(scenario_of(serial_none)).step_time_s));
    // Nor on one tensor rank, where there is nothing to reduce.
    TrainingSetup single = llama_tp8("megatron-core");
    single.plan.tp = 1;
    single.plan.sequence_parallel = false;
    single.chips = 1;
    for (const DerivedMatmul& m : derive_layout_work(scenario_of(single)).dense.matmuls) {
        CHECK_FALSE(m.output_reduced);
        CHECK_FALSE(m.input_gradient_reduced);
    }
    CHECK(component_s(simulate_training(scenario_of(single)), "tensor-parallel comms (exposed)") == 0.0);
}

TEST_CASE("a stack's tensor-parallel SMs: negative, impossible or without a source are refused naming the file and field") {
    const auto refused = [](const nlohmann::json& stack, const std::string& field) {
        const auto path = test::scratch_dir("stacks") / "bad-tp-sms.json";
        std::ofstream(path) << stack.dump(2);
        try {
            (void)load_stack_file(path);
            FAIL("no error for " << field);
        } catch (const InputError& e) {
            CHECK(e.field() == field);
            CHECK(std::string(e.what()).find("bad-tp-sms.json") != std::string::npos);
        }
    };
    const nlohmann::json good = test::read_json(test::source_dir() / "stacks" / "megatron-core.json");
    for (const char* field : {"tp_comm_sms_forward", "tp_comm_sms_backward"})
        for (const double sms : {-1.0, 5000.0}) {
            nlohmann::json stack = good;
            stack[field] = sms;
            refused(stack, field);
        }
    nlohmann::json unsourced = good;
    unsourced.erase("tp_comm_source");
    refused(unsourced, "tp_comm_source");
}
