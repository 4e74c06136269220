// Multi-head latent attention in one place: the shipped DeepSeek-V3 and a run record that gives
// MLA's shapes cost the same cache, parameters and FLOPs in `model`, `serve` and `train`.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "inference/serving.hpp"
#include "inference/serving_rules.hpp"
#include "model/model_catalog.hpp"
#include "engine/model_summary.hpp"
#include "scenario/serving_setup.hpp"
#include "scenario/training_setup.hpp"
#include "sharding/strategy_file.hpp"
#include "stack/stack_file.hpp"
#include "test_support.hpp"
#include "validation/run_record.hpp"
#include "validation/validate.hpp"

using namespace ridgeline;

namespace {

// A DeepSeek-V3 training record written from the technical report's Sec. 4.2 hyper-parameters.
nlohmann::json deepseek_record(bool with_mla) {
    nlohmann::json runs = test::read_json(test::data_file("runs/published-runs-dev.json"));
    nlohmann::json record;
    for (const auto& r : runs["records"])
        if (r["id"] == "dgxc-grok1-314b-BF16-128gpu") record = r;
    REQUIRE(!record.is_null());
    record["id"] = "deepseek-v3-mla";
    record["model"] = {{"name", "DeepSeek-V3"}, {"layers", 61},  {"d_model", 7168},      {"heads", 128},
                       {"kv_heads", 128},       {"head_dim", 128}, {"d_ff", 18432},      {"vocab", 129280},
                       {"gated_mlp", true},     {"tied_embeddings", false}, {"attention", "mla"},
                       {"moe", {{"experts", 256}, {"top_k", 8}, {"d_ff_expert", 2048}, {"shared_experts", 1}, {"dense_layers", 3}, {"layer_freq", 1}}}};
    if (with_mla)
        record["model"]["mla"] = {{"q_lora_rank", 1536}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}};
    return {{"schema", "ridgeline.run-record/1"}, {"records", {record}}};
}

RunRecord load_one(const nlohmann::json& file, const std::string& name) {
    const auto path = test::scratch_dir("mla") / name;
    std::ofstream(path) << file.dump();
    const auto records = load_run_records(path, test::source_dir());
    REQUIRE(records.size() == 1);
    return records.front();
}

}  // namespace

TEST_CASE("DeepSeek-V3 caches 61 x (512 + 64) x 2 = 70,272 bytes per token in model, serve and a run record alike") {
    const ModelSpec shipped = resolve_model("deepseek-v3", test::source_dir());
    const ModelSpec recorded = record_model(load_one(deepseek_record(true), "mla.json"));
    REQUIRE(recorded.mla.has_value());
    const double expected = 61.0 * (512 + 64) * 2;
    CHECK(summarize_model(shipped, 4096, {}).kv_bytes_per_token[0] == expected);  // bf16
    CHECK(kv_cache_bytes_per_token(recorded, Dtype::bf16) == expected);

    ServingSetup serving;
    serving.model = shipped;
    serving.strategy = resolve_strategy(kServingStrategy, test::source_dir());
    serving.hardware = resolve_hardware("dgx-h200", test::source_dir());
    serving.stack = default_stack(serving.hardware.chip, true, test::source_dir());
    serving.chips = 8;
    serving.plan.tp = 8;
    serving.batch_seqs = 1;
    serving.input_len = 1024;
    serving.output_len = 16;
    CHECK(simulate_serving(build_serving_scenario(serving)).kv_cache_bytes_per_token == expected);

    // The same parameters and forward FLOPs from the record as from the shipped file.
    CHECK(count_params(recorded).total == count_params(shipped).total);
    CHECK(flops_per_token(recorded, 4096, true).forward() == flops_per_token(shipped, 4096, true).forward());
}

TEST_CASE("train prices DeepSeek-V3's MLA from the record as from the shipped model: 3x the forward FLOPs per token") {
    const ModelSpec shipped = resolve_model("deepseek-v3", test::source_dir());
    const TrainingSetup from_record = record_training_setup(load_one(deepseek_record(true), "train.json"), test::source_dir());
    const TrainingReport report = simulate_training(build_training_scenario(from_record, test::source_dir(), "test"));
    CHECK(report.model_flops_per_token == doctest::Approx(3.0 * flops_per_token(shipped, from_record.seq_len, true).forward()));

    // Without its shapes the record is plain attention over 128 KV heads: a far larger cache, and it says so.
    const ModelSpec plain = record_model(load_one(deepseek_record(false), "plain.json"));
    CHECK_FALSE(plain.mla.has_value());
    CHECK(kv_cache_bytes_per_token(plain, Dtype::bf16) > 10 * 61.0 * (512 + 64) * 2);
    CHECK(plain.description.find("MLA shapes not given") != std::string::npos);
}

TEST_CASE("a record's MLA shapes on non-MLA attention, or with a zero latent rank, are refused naming the field") {
    nlohmann::json file = deepseek_record(true);
    file["records"][0]["model"]["attention"] = "mha";
    try {
        (void)load_one(file, "mha-with-mla.json");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.field().find("model.mla") != std::string::npos);
    }
    file = deepseek_record(true);
    file["records"][0]["model"]["mla"]["kv_lora_rank"] = 0;
    try {
        (void)load_one(file, "zero-rank.json");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.field().find("kv_lora_rank") != std::string::npos);
    }
}
