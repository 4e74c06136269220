// How positions enter a run record's model: MPT (LLM Foundry's benchmarks) learns a table of positions
// and rotates nothing, so its layers run no RoPE kernel; absent, a record's model is rotary.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "engine/training.hpp"
#include "model/transformer_math.hpp"
#include "test_support.hpp"
#include "validation/run_record.hpp"
#include "validation/validate.hpp"

using namespace ridgeline;

namespace {

// LLM Foundry's MPT-70B on 512 H100s (tp 1, 8 sequences of 2,048 per micro-batch), with positions as given.
RunRecord mpt_record(const nlohmann::json& positions, const std::string& name) {
    nlohmann::json runs = test::read_json(test::data_file("runs/published-runs-dev.json"));
    nlohmann::json record;
    for (const auto& r : runs["records"])
        if (r["id"] == "mosaic-70b-h100_80gb-512gpu-s2048-amp_bf16-mbs8") record = r;
    REQUIRE(!record.is_null());
    if (positions.is_null()) record["model"].erase("position_embeddings");
    else record["model"]["position_embeddings"] = positions;
    const auto path = test::scratch_dir("positions") / name;
    std::ofstream(path) << nlohmann::json{{"schema", "ridgeline.run-record/1"}, {"records", {record}}}.dump();
    const auto records = load_run_records(path, test::source_dir());
    REQUIRE(records.size() == 1);
    return records.front();
}

double elementwise_fwd_s(const RunRecord& r) {
    const TrainingScenario s = record_scenario(r, test::source_dir());
    return cost_layout(s, derive_layout_work(s), nullptr).costs.elementwise_fwd_s;
}

}  // namespace

TEST_CASE("a record with learned positions holds a table of seq_len x d_model and runs no RoPE kernel") {
    const RunRecord learned = mpt_record("learned", "learned.json"), rotary = mpt_record("rotary", "rotary.json");
    const RunRecord unstated = mpt_record(nullptr, "unstated.json");
    const ModelSpec with_table = record_model(learned), rotating = record_model(rotary);
    CHECK(with_table.learned_position_embeddings == 2048);
    CHECK(record_model(unstated).learned_position_embeddings == 0);
    CHECK(count_params(with_table).embedding - count_params(rotating).embedding == doctest::Approx(2048.0 * 8192));

    // The query/key/value projection's output is read and written once more either way: at the measured
    // RoPE kernel's rate when rotary (LLM Foundry runs eager kernels), at a copy's when not. Its bytes:
    // 2 passes x 8 x 2,048 tokens x 3 x 8,192 columns (MHA, tp 1) x 2 bytes.
    const auto memory = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json")["kernels"]["memory_bound"];
    const double hbm_Bps = test::read_json(test::source_dir() / "hardware" / "chips" / "h100-sxm.json")["hbm_bw_Bps"]["value"];
    const double bytes = 2.0 * 8 * 2048 * 3 * 8192 * 2;
    const double expected_s = bytes / (hbm_Bps * memory["rope_qk_fwd"].get<double>()) - bytes / (hbm_Bps * memory["copy"].get<double>());
    CHECK(elementwise_fwd_s(rotary) - elementwise_fwd_s(learned) == doctest::Approx(expected_s).scale(0).epsilon(1e-6));
    CHECK(elementwise_fwd_s(unstated) == doctest::Approx(elementwise_fwd_s(rotary)));
}

TEST_CASE("a record's position embeddings other than rotary or learned are refused naming the field") {
    try {
        (void)mpt_record("alibi", "alibi.json");
        FAIL("no error");
    } catch (const InputError& e) {
        CHECK(e.field().find("position_embeddings") != std::string::npos);
    }
}
