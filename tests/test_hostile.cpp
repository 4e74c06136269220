// The hostile corpus (tests/data/hostile/, written by scripts/make_hostile_corpus.py): each file is
// broken in one way a hostile or careless user might break it, and each must be refused by the
// command that reads it with exit 2, one line naming the file (or flag) and the field, no NaN,
// nothing on stdout, the file untouched, quickly and in bounded memory.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/clip.hpp"
#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "test_support.hpp"

namespace {

#ifdef RIDGELINE_SANITIZED
constexpr double kSecondsPerCase = 20;  // ASan/UBSan builds run several times slower
constexpr double kMaxResidentBytes = 4e9;  // and keep shadow memory
#else
constexpr double kSecondsPerCase = 2;
constexpr double kMaxResidentBytes = 500e6;
#endif

std::string replace_file(std::string command, const std::string& path) {
    const auto at = command.find("{file}");
    REQUIRE(at != std::string::npos);
    return command.replace(at, 6, path);
}

}  // namespace

TEST_CASE("hostile inputs: every case is refused with exit 2 naming the file and field, quickly, changing nothing") {
    const auto folder = ridgeline::test::data_file("hostile");
    const nlohmann::json corpus = ridgeline::test::read_json(folder / "cases.json");
    REQUIRE(corpus["cases"].size() >= 250);  // issue 43: every reader and flag family
    for (const auto& c : corpus["cases"]) {
        const auto path = folder / c["file"].get<std::string>();
        CAPTURE(path.string());
        const auto size = std::filesystem::file_size(path);
        const auto written = std::filesystem::last_write_time(path);
        const auto start = std::chrono::steady_clock::now();
        const auto result = ridgeline::test::run_ridgeline(replace_file(c["command"], path.string()));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        CAPTURE(result.err);
        CHECK(result.exit_code == 2);
        CHECK(result.out.empty());
        CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
        for (const auto& needle : c["needles"]) CHECK(result.err.find(needle.get<std::string>()) != std::string::npos);
        CHECK(result.err.find("nan") == std::string::npos);
        CHECK(result.err.find("inf ") == std::string::npos);
        CHECK(seconds < kSecondsPerCase);
        CHECK(result.max_rss_bytes > 0);
        CHECK(result.max_rss_bytes < kMaxResidentBytes);
        CHECK(std::filesystem::file_size(path) == size);
        CHECK(std::filesystem::last_write_time(path) == written);
    }
}

// NaN passes every range check (it compares false), and strtol reads "010" as octal 8: every numeric
// flag of every command refuses both, naming the flag.
TEST_CASE("hostile flags: NaN, infinities and leading zeros are refused on every numeric flag") {
    const std::string train = "train --model llama3-8b --hardware dgx-h100 --chips 8 ";
    for (const std::string flag : {"--seq-len nan", "--memory-margin nan", "--micro-batch -NaN", "--failures-per-chip-hour nan"})
        ridgeline::test::expect_refusal(train + flag, {flag.substr(0, flag.find(' ')), "finite"});
    // Flags with a range of their own may refuse an infinity by it first: still exit 2, naming the flag.
    for (const std::string flag : {"--expert-imbalance inf", "--global-batch-tokens +Infinity", "--seq-len inf"})
        ridgeline::test::expect_refusal(train + flag, {flag.substr(0, flag.find(' '))});
    ridgeline::test::expect_refusal(train + "--tp 010", {"--tp", "leading zero"});
    ridgeline::test::expect_refusal("serve --model llama3-8b --hardware dgx-h100 --batch 8 --input-len nan --output-len 128",
                                    {"--input-len", "finite"});
    ridgeline::test::expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 8 --seq-len 08192", {"--seq-len", "leading zero"});
    // Degrees past the chips are refused before they are multiplied (2^32 x 2^32 wraps to 0 in 64 bits).
    ridgeline::test::expect_refusal(train + "--tp 4294967296 --pp 4294967296", {"tp", "4294967296", "8 chips"});
    ridgeline::test::expect_refusal(train + "--tp 8 --pp 8 --cp 8", {"tp x pp x cp", "exceeds"});
    // Numbers people write stay numbers.
    CHECK(ridgeline::test::run_ridgeline(train + "--tp 8 --seq-len 8192 --memory-margin 0.05").exit_code == 0);
    CHECK(ridgeline::test::run_ridgeline(train + "--global-batch-tokens 6.5536e4").exit_code == 0);
}

// Files that are not files: a FIFO or a folder given as a launch file would hang or read nothing;
// renaming a result over a device would replace the device node; a report lost on a full stdout is
// no success; fit writing its chip over its own measurements would lose them.
TEST_CASE("hostile files: FIFOs, devices, folders and a full stdout are refused, and nothing is damaged") {
    const auto dir = ridgeline::test::scratch_dir("not_files");
    const auto fifo = dir / "launch.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string train = "train --model llama3-8b --hardware dgx-h100 --chips 8 ";
    ridgeline::test::expect_refusal(train + "--from megatron " + fifo.string(), {fifo.string(), "not a regular file"});
    ridgeline::test::expect_refusal(train + "--from maxtext " + dir.string(), {dir.string(), "not a regular file"});
    ridgeline::test::expect_refusal(train + "--from torchtitan /proc/self/environ", {"/proc/self/environ", "pseudo-file"});
    ridgeline::test::expect_refusal(train + "--html " + fifo.string(), {fifo.string(), "not a regular file"});
    CHECK(std::filesystem::is_fifo(fifo));
    // Where nothing can be written (a missing folder, a folder, /proc even for root): refused, not a crash.
    ridgeline::test::expect_refusal(train + "--html " + (dir / "no-such-folder" / "page.html").string(), {"--html", "does not exist"});
    ridgeline::test::expect_refusal(train + "--html " + dir.string(), {dir.string(), "folder"});
    if (std::filesystem::is_directory("/proc/self"))
        ridgeline::test::expect_refusal(train + "--html /proc/self/page.html", {"/proc/self"});
    if (std::filesystem::is_character_file("/dev/full")) {
        ridgeline::test::expect_refusal(train + "--html /dev/full", {"/dev/full", "not a regular file"});
        CHECK(std::filesystem::is_character_file("/dev/full"));
        const auto full = ridgeline::test::run_ridgeline("model llama3-8b >/dev/full");
        CHECK(full.exit_code == 1);
        CHECK(full.err.find("stdout") != std::string::npos);
    }
    const auto measurements = dir / "measurements.json";
    std::filesystem::copy_file(ridgeline::test::data_file("reference/gpu-kernels-h100.json"), measurements);
    const auto before = std::filesystem::file_size(measurements);
    ridgeline::test::expect_refusal("fit " + measurements.string() + " --like h100-sxm -o " + measurements.string(),
                                    {"-o", "measurements file itself"});
    CHECK(std::filesystem::file_size(measurements) == before);
}

// Searches with no end in sight: a chip range of 99,991 counts (each a search), a space larger
// than the time allowed, and a deadline no count can meet.
TEST_CASE("hostile searches: too many chip counts, a time limit and a hopeless deadline end quickly") {
    ridgeline::test::expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 8..799928:8", {"--chips", "coarser step"});
    // 1,024 threads asked for: one a core run.
    const auto threads = ridgeline::test::run_ridgeline("search train --model llama3-8b --hardware dgx-h100 --chips 8 --threads 1024 --json");
    REQUIRE(threads.exit_code == 0);
    CHECK(nlohmann::json::parse(threads.out)["threads"].get<unsigned>() == std::max(1U, std::thread::hardware_concurrency()));
    ridgeline::test::expect_refusal("search serve --model llama3-8b --hardware dgx-h100 --chips 8..799928:8 --input-len 128 --output-len 128 --slo-ttft-ms 100 --slo-tpot-ms 20",
                                    {"--chips", "coarser step"});
    const auto start = std::chrono::steady_clock::now();
    ridgeline::test::expect_refusal("search train --model deepseek-v3 --hardware dgx-h100 --chips 2048 --time-limit 1", {"--time-limit", "searched"});
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 10 * kSecondsPerCase);
    // LLaMA-3 405B, 1e16 tokens in one day: 6 x 405e9 x 1e16 FLOPs = 2.4e28 at ~1e15 FLOP/s per H100 needs
    // ~2.8e8 chip-days, far past any count: the doubling stops once linear scaling from the last count
    // to the largest could not meet the deadline, and says none meets it.
    const auto deadline = ridgeline::test::run_ridgeline(
        "search train --model llama3-405b --hardware dgx-h100 --train-tokens 1e16 --deadline-days 1 --json");
    REQUIRE(deadline.exit_code == 0);
    const auto doc = nlohmann::json::parse(deadline.out);
    CHECK(doc["deadline_met"] == false);
    CHECK(doc["points"].size() <= 4);
}

// Knobs that mean nothing where they are given, and outputs aimed at inputs.
TEST_CASE("hostile knobs: flags that mean nothing are refused, and no result replaces an input") {
    const std::string train = "train --model llama3-8b --hardware dgx-h100 --chips 8 ";
    ridgeline::test::expect_refusal(train + "--ep 8", {"ep", "dense model"});
    ridgeline::test::expect_refusal(train + "--stack vllm", {"stack", "vllm", "does not train"});
    ridgeline::test::expect_refusal("search train --model llama3-8b --hardware dgx-h100 --chips 8 --stack tensorrt-llm", {"--stack", "does not train"});
    ridgeline::test::expect_refusal(train + "--placement ''", {"--placement", "empty"});
    ridgeline::test::expect_refusal(train + "--global-batch-tokens 1048576 --global-batch-seqs 128", {"--global-batch", "excludes"});
    const auto dir = ridgeline::test::scratch_dir("inputs_kept");
    const auto model = dir / "model.json";
    std::filesystem::copy_file(ridgeline::test::source_dir() / "models" / "llama3-8b.json", model);
    const auto size = std::filesystem::file_size(model);
    ridgeline::test::expect_refusal("train --model " + model.string() + " --hardware dgx-h100 --chips 8 --html " + model.string(),
                                    {model.string(), "inputs"});
    CHECK(std::filesystem::file_size(model) == size);
    // --emit prints the configuration and --html still writes the report's page.
    const auto page = dir / "page.html";
    const auto emitted = ridgeline::test::run_ridgeline(train + "--emit megatron --html " + page.string());
    CHECK(emitted.exit_code == 0);
    CHECK(emitted.out.find("--tensor-model-parallel-size") != std::string::npos);
    CHECK(std::filesystem::exists(page));
    // A second YAML document would be dropped unread.
    const auto yaml = dir / "two.yml";
    std::ofstream(yaml) << "---\nper_device_batch_size: 4\n---\nper_device_batch_size: 8\n";
    ridgeline::test::expect_refusal("train --model llama3-8b --hardware tpu-v5p --chips 64 --from maxtext " + yaml.string(),
                                    {yaml.string(), "2 YAML documents"});
}

// One rule for FSDP's reach, whoever reads the plan: a run record and the command line both refuse
// FSDP sharded over context ranks as well (torchtitan's FSDP2 with context parallelism).
TEST_CASE("hostile plans: fsdp over the context ranks is refused alike by the run-record reader and the plan builder") {
    nlohmann::json runs = ridgeline::test::read_json(ridgeline::test::data_file("runs/published-runs-dev.json"));
    nlohmann::json record;
    for (const auto& r : runs["records"])
        if (r["hardware"]["accelerator"] == "h100-sxm" && r["model"]["moe"].is_null() && r["model"]["attention"] != "mla") {
            record = r;
            break;
        }
    REQUIRE(!record.is_null());
    // 16 GPUs: dp 8 x cp 2; fsdp 16 spans the context ranks.
    record["hardware"]["count"] = 16;
    for (const char* axis : {"tp", "pp", "ep"}) record["plan"][axis] = 1;
    record["plan"]["dp"] = 8;
    record["plan"]["cp"] = 2;
    record["plan"]["fsdp"] = 16;
    record["plan"]["zero"] = 3;
    runs["records"] = nlohmann::json::array({record});
    const auto file = ridgeline::test::scratch_dir("fsdp_cp") / "record.json";
    std::ofstream(file) << runs.dump();
    ridgeline::test::expect_refusal("validate " + file.string(), {file.string(), "fsdp", "context ranks"});
    ridgeline::test::expect_refusal("train --model llama3-8b --hardware dgx-h100 --chips 16 --dp 8 --cp 2 --fsdp 16",
                                    {"fsdp", "does not divide dp 8", "context ranks"});
}

TEST_CASE("hostile run records: a serving latency without its statistic, of an unknown one, or off a load is refused naming the field") {
    const nlohmann::json runs = ridgeline::test::read_json(ridgeline::test::data_file("runs/published-serve-records.json"));
    nlohmann::json record;
    for (const auto& r : runs["records"])
        if (r["measured"].contains("ttft_s")) record = r;
    REQUIRE(!record.is_null());
    const auto refused = [&](const std::string& name, nlohmann::json changed, const std::vector<std::string>& needles) {
        nlohmann::json doc = runs;
        doc["records"] = nlohmann::json::array({std::move(changed)});
        const auto file = ridgeline::test::scratch_dir("latency") / (name + ".json");
        std::ofstream(file) << doc.dump();
        std::vector<std::string> all = {file.string()};
        all.insert(all.end(), needles.begin(), needles.end());
        ridgeline::test::expect_refusal("validate " + file.string(), all);
    };
    nlohmann::json r = record;
    r["measured"]["ttft_s"].erase("statistic");
    refused("no-statistic", r, {"measured.ttft_s.statistic", "missing"});
    r = record;
    r["measured"]["itl_s"]["statistic"] = "median";
    refused("unknown-statistic", r, {"measured.itl_s.statistic", "median"});
    r = record;
    r["measured"]["ttft_s"]["value"] = -0.4;
    refused("negative", r, {"measured.ttft_s.value"});
    r = record;
    r["workload"]["concurrency"] = nullptr;
    refused("no-load", r, {"measured.ttft_s", "concurrency"});
}

// A scenario gives its batch in tokens: --seq-len keeps the tokens and changes the sequences, never
// the reverse behind the user's back.
TEST_CASE("hostile knobs: --seq-len on a scenario keeps its batch of tokens") {
    // scenarios/llama3-405b-h100-16k.json: 16,777,216 tokens a step at 8,192 (2,048 sequences); at 4,096: 4,096 sequences.
    const std::string scenario = (ridgeline::test::source_dir() / "scenarios" / "llama3-405b-h100-16k.json").string();
    const auto result = ridgeline::test::run_ridgeline("train --scenario " + scenario + " --seq-len 4096 --json");
    REQUIRE(result.exit_code == 0);
    const auto doc = nlohmann::json::parse(result.out);
    CHECK(doc["global_batch_seqs"].get<double>() == 4096);
    CHECK(doc["tokens_per_step"].get<double>() == 16777216);
    ridgeline::test::expect_refusal("train --scenario " + scenario + " --seq-len 3000", {"--seq-len", "16777216 tokens", "whole number"});
}

// Files parsed once are kept for the files read again (validate reads each chip and stack file per
// record); a file rewritten at once with text of the same size, inode and (coarse) time is read anew.
TEST_CASE("a JSON file rewritten in place is parsed again, however little changed") {
    const auto path = ridgeline::test::scratch_dir("rewritten") / "file.json";
    for (const int value : {1, 2, 3}) {
        std::ofstream(path) << "{\"a\": " << value << "}";
        CHECK(ridgeline::io::parse_json_file(path).at("a") == value);
        CHECK(ridgeline::io::parse_json_file(path).at("a") == value);  // the kept copy, unchanged
    }
    std::ofstream(path) << "{\"a\": ";
    CHECK_THROWS_AS((void)ridgeline::io::parse_json_file(path), ridgeline::InputError);
}

// Values echoed in errors: one helper clips each word or quoted value past 160 characters, keeping its
// start and its length, and writes control characters as escapes so a value cannot forge a second line.
TEST_CASE("hostile values: an error quotes at most 160 characters of a value and stays one line") {
    using ridgeline::clip_error_line;
    CHECK(clip_error_line("file.json: field 'mlp': expected \"gated\"") == "file.json: field 'mlp': expected \"gated\"");
    const std::string huge(5000, 'g');
    const std::string clipped = clip_error_line("found \"" + huge + "\" here");
    CHECK(clipped.size() < 200);
    CHECK(clipped.find("(5002 bytes)\" here") != std::string::npos);  // the quotes count
    // The file the error is about keeps its whole name.
    const std::string path = "/tmp/" + std::string(300, 'd') + "/model.json:";
    CHECK(clip_error_line(path + " field 'x': " + huge).starts_with(path));
    CHECK(clip_error_line("a\nb\tc\x01") == "a\\nb\\tc\\x01");
    // A clipped run never ends inside a UTF-8 character: 200 three-byte characters keep whole ones.
    std::string wide;
    for (int i = 0; i < 200; ++i) wide += "\xe2\x82\xac";  // the euro sign
    const std::string kept = clip_error_line("found " + wide);
    REQUIRE(kept.find("...") != std::string::npos);
    CHECK((kept.find("...") - 6) % 3 == 0);

    // End to end: a model file whose mlp holds 5,000 characters and a newline.
    nlohmann::json model = ridgeline::test::read_json(ridgeline::test::source_dir() / "models" / "llama3-8b.json");
    model["mlp"] = huge + "\nerror: a forged second line";
    const auto file = ridgeline::test::scratch_dir("long_values") / "model.json";
    std::ofstream(file) << model.dump();
    const auto result = ridgeline::test::run_ridgeline("model " + file.string());
    CHECK(result.exit_code == 2);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK(result.err.size() < 400);
    CHECK(result.err.find("'mlp'") != std::string::npos);
}
