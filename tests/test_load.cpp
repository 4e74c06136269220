// The request-level simulator: at one request at a time it is the static serve model, Little's law
// holds on every run, tokens are conserved, and bad traces and engine files are refused by name.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <type_traits>
#include <variant>

#include "core/error.hpp"
#include "inference/load.hpp"
#include "io/trace_file.hpp"
#include "scenario/serving_setup.hpp"
#include "stack/engine_file.hpp"
#include "test_support.hpp"

using namespace ridgeline;

namespace {

ServingScenario scenario_for(const std::string& model, const std::string& hardware, std::int64_t chips, std::int64_t tp,
                             double input_len, double output_len, std::int64_t dp = 0) {
    ServingSetup setup = test::serving_setup(model, hardware, chips, tp, static_cast<double>(dp > 0 ? dp : chips / tp), input_len, output_len);
    setup.plan.dp = dp;
    return build_serving_scenario(setup);
}

SchedulerSpec vllm() { return resolve_engine("vllm", test::source_dir()); }

LoadReport closed_loop(const ServingScenario& s, const SchedulerSpec& engine, std::int64_t clients, std::int64_t requests) {
    FixedLengthRequests source(requests, static_cast<std::int64_t>(s.input_len), static_cast<std::int64_t>(s.output_len), 0);
    return simulate_load(s, engine, source, {clients});
}

LoadReport open_loop(const ServingScenario& s, const SchedulerSpec& engine, double rate, std::int64_t requests) {
    FixedLengthRequests source(requests, static_cast<std::int64_t>(s.input_len), static_cast<std::int64_t>(s.output_len), rate);
    return simulate_load(s, engine, source, {});
}

void check_little(const LoadReport& r) {
    // L = lambda W, each side measured on its own: the time integral of requests in the system, and
    // completions per second times their mean latency.
    CHECK(r.mean_in_system > 0);
    CHECK(r.mean_in_system == doctest::Approx(r.completion_rate_x_latency).scale(0).epsilon(0.01));
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
    const auto path = test::scratch_dir("load") / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

void expect_error(const std::function<void()>& run, const std::string& origin_part, const std::string& field) {
    try {
        run();
        FAIL("no error, expected one naming " << field);
    } catch (const InputError& e) {
        CHECK_MESSAGE(e.origin().find(origin_part) != std::string::npos, e.what() << " [origin " << e.origin() << ", field " << e.field() << "]");
        CHECK_MESSAGE(e.field().find(field) != std::string::npos, e.what());
    }
}

}  // namespace

TEST_CASE("one request at a time, the simulator is the static serve model: TTFT and TPOT exactly") {
    // Dense, MoE and sliding-window models; the prompt fits one iteration's token budget.
    struct Case {
        const char* model;
        const char* hardware;
        std::int64_t chips, tp;
    };
    for (const Case& c : {Case{"llama3-8b", "dgx-h100", 1, 1}, Case{"llama3-70b", "dgx-h100", 8, 8}, Case{"mixtral-8x7b", "dgx-h100", 8, 8},
                          Case{"mistral-7b-v0.1", "dgx-h100", 1, 1}}) {
        CAPTURE(c.model);
        const ServingScenario s = scenario_for(c.model, c.hardware, c.chips, c.tp, 2000, 300);
        const ServingReport fixed = simulate_serving(s);
        // A closed loop of one client: each request arrives when the last ends, so none overlap.
        const LoadReport load = closed_loop(s, vllm(), 1, 3);
        CHECK(load.ttft_s.p50 == doctest::Approx(fixed.prefill.time_s).scale(0).epsilon(1e-9));
        CHECK(load.ttft_s.p99 == doctest::Approx(fixed.prefill.time_s).scale(0).epsilon(1e-9));
        // TPOT is the mean decode step; the static model prices the step at the mean context.
        CHECK(load.tpot_s.mean == doctest::Approx(fixed.tpot_s()).scale(0).epsilon(1e-9));
        CHECK(load.e2e_s.p50 == doctest::Approx(fixed.prefill.time_s + 299 * fixed.tpot_s()).scale(0).epsilon(1e-9));
        CHECK(load.preemptions == 0);
        check_little(load);
    }
}

TEST_CASE("an open loop whose arrivals never overlap sees the idle server's latencies") {
    const ServingScenario s = scenario_for("llama3-8b", "dgx-h100", 1, 1, 1000, 100);
    const ServingReport fixed = simulate_serving(s);
    // A request lasts about a second; arrivals a thousand seconds apart on average rarely overlap.
    const LoadReport load = open_loop(s, vllm(), 1e-3, 50);
    CHECK(load.ttft_s.p50 == doctest::Approx(fixed.prefill.time_s).scale(0).epsilon(1e-9));
    CHECK(load.tpot_s.p50 == doctest::Approx(fixed.tpot_s()).scale(0).epsilon(1e-9));
    check_little(load);
}

TEST_CASE("Little's law and token conservation hold under every load, preemptions included") {
    const ServingScenario s = scenario_for("llama3-8b", "dgx-h100", 2, 1, 1500, 400, 2);
    SchedulerSpec engine = vllm();
    std::vector<LoadReport> runs;
    for (std::int64_t clients : {2, 16, 64, 512}) runs.push_back(closed_loop(s, engine, clients, 600));
    for (double rate : {2.0, 20.0, 200.0}) runs.push_back(open_loop(s, engine, rate, 600));
    // A cache barely above the weights: requests are preempted and recomputed.
    engine.kv_memory_fraction = (16.1e9 + 5e9) / 80e9;
    const LoadReport tight = closed_loop(s, engine, 256, 600);
    CHECK(tight.preemptions > 0);
    runs.push_back(tight);
    engine = vllm();
    engine.chunked_prefill = false;
    runs.push_back(open_loop(s, engine, 50.0, 300));
    // SGLang's separate prefill and decode iterations, TensorRT-LLM's whole-request reservations.
    const SchedulerSpec sglang = resolve_engine("sglang", test::source_dir());
    runs.push_back(closed_loop(s, sglang, 64, 600));
    runs.push_back(open_loop(s, sglang, 30.0, 600));
    SchedulerSpec trtllm = resolve_engine("tensorrt-llm", test::source_dir());
    trtllm.kv_memory_fraction = 0.1;  // a small cache: requests wait for room instead of being preempted
    const LoadReport reserved = closed_loop(s, trtllm, 512, 600);
    CHECK(reserved.preemptions == 0);
    runs.push_back(reserved);
    for (const LoadReport& r : runs) {
        CAPTURE(r.concurrency);
        CAPTURE(r.requests);
        check_little(r);
        // Every request's tokens come out, over the two replicas.
        CHECK(r.output_tokens_per_s * r.duration_s == doctest::Approx(static_cast<double>(r.requests) * 400.0));
        CHECK(r.input_tokens_per_s * r.duration_s == doctest::Approx(static_cast<double>(r.requests) * 1500.0));
        CHECK(r.ttft_s.p50 <= r.ttft_s.p90);
        CHECK(r.ttft_s.p90 <= r.ttft_s.p99);
        CHECK(r.e2e_s.p50 >= r.ttft_s.p50);
    }
    // More clients, more throughput and longer steps, until the engine's sequence limit binds.
    CHECK(runs[1].output_tokens_per_s > runs[0].output_tokens_per_s * 4);
    CHECK(runs[2].output_tokens_per_s > runs[1].output_tokens_per_s);
    CHECK(runs[2].tpot_s.p50 > runs[0].tpot_s.p50);
    CHECK(runs[3].mean_running <= static_cast<double>(engine.max_seqs));
}

TEST_CASE("the KV cache holds what the engine's memory fraction leaves after the weights") {
    // LLaMA-3 8B in bf16 on one H100: 80 GB x 0.9 less 16.06 GB of weights and the prompt's working
    // set, at 128 KiB a token (32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes).
    const ServingScenario s = scenario_for("llama3-8b", "dgx-h100", 1, 1, 1000, 100);
    const SchedulerSpec engine = vllm();
    const LoadReport load = closed_loop(s, engine, 1, 1);
    const double per_token = 32.0 * 8 * 128 * 2 * 2;
    const double room = engine.kv_memory_fraction * 80e9 - 16.06e9;
    CHECK(static_cast<double>(load.kv_blocks * engine.kv_block_tokens) == doctest::Approx(room / per_token).scale(0).epsilon(0.02));
}

TEST_CASE("a Mooncake trace is read as published and simulated") {
    const auto trace = test::data_file("traces/mooncake-conversation-first-400.jsonl");
    io::TraceFile file(trace, 131072);
    std::int64_t lines = 0;
    double last_s = 0;
    std::optional<Request> first;
    while (auto r = file.next()) {
        if (!first) first = r;
        ++lines;
        last_s = r->arrival_s;
    }
    CHECK(lines == 400);
    REQUIRE(first);
    // Its first line: {"timestamp": 0, "input_length": 6758, "output_length": 500, ...}
    CHECK(first->input_tokens == 6758);
    CHECK(first->output_tokens == 500);
    CHECK(last_s == doctest::Approx(141.0));  // timestamp 141000 ms
    const ServingScenario s = scenario_for("llama3.1-70b", "dgx-h100", 8, 8, 14000, 365);
    io::TraceFile again(trace, 131072);
    const LoadReport load = simulate_load(s, vllm(), again, {});
    CHECK(load.requests == 400);
    check_little(load);
}

TEST_CASE("bad traces are refused naming the file, the line and the field") {
    const auto run = [](const std::string& name, const std::string& text) {
        return [name, text] {
            io::TraceFile file(write_file(name, text), 8192);
            while (file.next()) {
            }
        };
    };
    expect_error(run("unsorted", "{\"arrival_s\": 1, \"input_tokens\": 5, \"output_tokens\": 5}\n"
                                 "{\"arrival_s\": 0.5, \"input_tokens\": 5, \"output_tokens\": 5}\n"),
                 "unsorted:2", "arrival_s");
    expect_error(run("negative", "{\"arrival_s\": -1, \"input_tokens\": 5, \"output_tokens\": 5}\n"), "negative:1", "arrival_s");
    expect_error(run("zero", "{\"arrival_s\": 0, \"input_tokens\": 0, \"output_tokens\": 5}\n"), "zero:1", "input_tokens");
    expect_error(run("fraction", "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 2.5}\n"), "fraction:1", "output_tokens");
    expect_error(run("long", "{\"timestamp\": 0, \"input_length\": 8000, \"output_length\": 500}\n"), "long:1", "input_length");
    expect_error(run("missing", "{\"timestamp\": 0, \"input_length\": 80}\n"), "missing:1", "output_length");
    expect_error(run("truncated", "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 5}\n{\"arrival_s\": 1, \"inp"),
                 "truncated:2", "");
    expect_error(run("latin1", "{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 5, \"note\": \"caf\xe9\"}\n"), "latin1:1", "");
    expect_error(run("array", "[1, 2, 3]\n"), "array:1", "");
    expect_error([] { io::TraceFile file("/nonexistent/trace.jsonl", 0); }, "/nonexistent/trace.jsonl", "");
}

TEST_CASE("shipped engines load with a source for every knob, and contradictory knobs are refused") {
    for (const CatalogEntry& entry : list_engines(test::source_dir())) {
        CAPTURE(entry.name);
        const SchedulerSpec spec = load_engine_file(entry.file);
        CHECK(spec.max_seqs >= 1);
        CHECK(spec.max_batched_tokens >= spec.kv_block_tokens);
        CHECK(spec.kv_memory_fraction > 0.5);
        CHECK(spec.kv_memory_fraction < 1.0);
    }
    const std::string good = R"({"schema": "ridgeline.engine/1", "name": "e", "description": "d", "version": "1", "repository": "r", "commit": "c",
 "scheduler": {"max_seqs": {"value": 256, "source": "s"}, "max_batched_tokens": {"value": BUDGET, "source": "s"},
 "prefill_chunk_tokens": {"value": 2048, "source": "s"}, "chunked_prefill": {"value": true, "source": "s"},
 "mixed_batches": {"value": true, "source": "s"}, "kv_block_tokens": {"value": 16, "source": "s"},
 "kv_memory_fraction": {"value": FRACTION, "source": "SOURCE"}, "kv_memory_basis": {"value": "hbm", "source": "s"},
 "kv_admission": {"value": "on_demand", "source": "s"}}})";
    const auto variant = [&](const std::string& budget, const std::string& fraction, const std::string& source) {
        std::string text = good;
        text.replace(text.find("BUDGET"), 6, budget);
        text.replace(text.find("FRACTION"), 8, fraction);
        text.replace(text.find("SOURCE"), 6, source);
        return text;
    };
    CHECK(load_engine_file(write_file("engine-good.json", variant("8192", "0.9", "s"))).max_batched_tokens == 8192);
    expect_error([&] { (void)load_engine_file(write_file("engine-budget.json", variant("8", "0.9", "s"))); }, "engine-budget.json",
                 "max_batched_tokens");
    // A budget below the prompt chunk (2048) contradicts it.
    expect_error([&] { (void)load_engine_file(write_file("engine-chunk.json", variant("1024", "0.9", "s"))); }, "engine-chunk.json",
                 "max_batched_tokens");
    std::string basis = variant("8192", "0.9", "s");
    basis.replace(basis.find("\"hbm\""), 5, "\"all\"");
    expect_error([&] { (void)load_engine_file(write_file("engine-basis.json", basis)); }, "engine-basis.json", "kv_memory_basis");
    expect_error([&] { (void)load_engine_file(write_file("engine-fraction.json", variant("8192", "1.2", "s"))); }, "engine-fraction.json",
                 "kv_memory_fraction");
    expect_error([&] { (void)load_engine_file(write_file("engine-zero.json", variant("8192", "0", "s"))); }, "engine-zero.json",
                 "kv_memory_fraction");
    expect_error([&] { (void)load_engine_file(write_file("engine-source.json", variant("8192", "0.9", ""))); }, "engine-source.json",
                 "kv_memory_fraction");
}

TEST_CASE("the scheduler's knob table, the engine schema and the serve report's engine block agree") {
    const nlohmann::json engine_schema = test::read_json(test::source_dir() / "schemas" / "ridgeline.engine-1.schema.json");
    const nlohmann::json& listed = engine_schema.at("properties").at("scheduler").at("properties");
    const nlohmann::json serve_schema = test::read_json(test::source_dir() / "schemas" / "ridgeline.serve-1.schema.json");
    const nlohmann::json& reported = serve_schema.at("properties").at("load").at("properties").at("engine").at("properties");
    CHECK(listed.size() == kSchedulerKnobs.size());
    CHECK(engine_schema.at("properties").at("scheduler").at("required").size() == kSchedulerKnobs.size());
    std::size_t reported_rows = 0;
    for (const SchedulerKnob& row : kSchedulerKnobs) {
        CAPTURE(row.key);
        REQUIRE(listed.contains(row.key));
        const nlohmann::json& value = listed.at(row.key).at("properties").at("value");
        std::visit(
            [&](auto member) {
                using T = std::remove_reference_t<decltype(SchedulerSpec{}.*member)>;
                if constexpr (std::is_enum_v<T>) {
                    std::vector<std::string> names;
                    for (std::size_t i = 0; !scheduler_choice(row.choices, i).empty(); ++i) names.emplace_back(scheduler_choice(row.choices, i));
                    CHECK(value.at("enum").get<std::vector<std::string>>() == names);
                } else if constexpr (std::is_same_v<T, std::int64_t>) {
                    CHECK(value.at("type") == "integer");
                    CHECK(value.at("minimum") == 1);
                    CHECK(value.at("maximum") == row.max);
                } else if constexpr (std::is_same_v<T, bool>) {
                    CHECK(value.at("type") == "boolean");
                } else {
                    CHECK(value.at("exclusiveMinimum") == 0);
                    CHECK(value.at("exclusiveMaximum") == 1);
                }
            },
            row.member);
        CHECK(reported.contains(row.key) == row.reported);
        reported_rows += row.reported ? 1 : 0;
    }
    CHECK(reported.size() == reported_rows + 2);  // and the engine's name and version
    // The report writes the reported rows as the engine file gave them.
    const SchedulerSpec vllm = resolve_engine("vllm", test::source_dir());
    const auto doc = nlohmann::json::parse(test::run_ridgeline("serve --model llama3-8b --hardware dgx-h100 --input-len 128 --output-len 16 "
                                                               "--concurrency 2 --requests 4 --json").out);
    const nlohmann::json& engine = doc.at("load").at("engine");
    CHECK(engine.at("max_seqs") == vllm.max_seqs);
    CHECK(engine.at("kv_memory_fraction") == vllm.kv_memory_fraction);
    CHECK(engine.at("chunked_prefill") == vllm.chunked_prefill);
}

TEST_CASE("loads the simulator cannot run yet are refused naming the field") {
    ServingScenario s = scenario_for("llama3-8b", "dgx-h100", 2, 1, 1000, 100, 2);
    expect_error([&] { (void)closed_loop(s, vllm(), 3, 10); }, "request", "concurrency");
    ServingSetup piped_setup = test::serving_setup("llama3-70b", "dgx-h100", 8, 4, 2, 100, 10);
    piped_setup.plan.pp = 2;
    const ServingScenario piped = build_serving_scenario(piped_setup);
    expect_error([&] { (void)closed_loop(piped, vllm(), 2, 4); }, "request", "pp");
    // A request larger than the whole cache would never run.
    SchedulerSpec small = vllm();
    // 0.22 x 80 GB less 16.06 GB of weights and 1 GB of prompt activations leaves about 4,500 tokens at 128 KiB.
    small.kv_memory_fraction = 0.22;
    const ServingScenario big = scenario_for("llama3-8b", "dgx-h100", 1, 1, 8000, 100);
    expect_error([&] { (void)closed_loop(big, small, 1, 1); }, "request 1", "input_tokens");
    // And 0.2 leaves none.
    small.kv_memory_fraction = 0.2;
    expect_error([&] { (void)closed_loop(big, small, 1, 1); }, "request", "kv_memory_fraction");
    // Without chunked prefill a prompt runs whole: TensorRT-LLM's 8,192-token budget admits no
    // 9,000-token prompt (it refuses one), and where cache blocks are taken on demand a preempted
    // request's recomputation (prompt and output so far) must fit as well.
    const SchedulerSpec trtllm = resolve_engine("tensorrt-llm", test::source_dir());
    REQUIRE_FALSE(trtllm.chunked_prefill);
    REQUIRE(trtllm.max_batched_tokens == 8192);
    const ServingScenario long_prompt = scenario_for("llama3-8b", "dgx-h100", 1, 1, 9000, 100);
    expect_error([&] { (void)closed_loop(long_prompt, trtllm, 1, 1); }, "request 1", "input_tokens");
    CHECK_NOTHROW((void)closed_loop(scenario_for("llama3-8b", "dgx-h100", 1, 1, 8000, 300), trtllm, 1, 1));  // whole reserved: no recompute
    SchedulerSpec unchunked = vllm();
    unchunked.chunked_prefill = false;
    unchunked.max_batched_tokens = 8192;
    expect_error([&] { (void)closed_loop(scenario_for("llama3-8b", "dgx-h100", 1, 1, 8000, 300), unchunked, 1, 1); }, "request 1", "input_tokens");
}
