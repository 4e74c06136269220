#include "stack/engine_file.hpp"

#include <tuple>

#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

// A knob is {"value": ..., "source": "where the engine sets it"}.
io::JsonObject knob(io::JsonObject& scheduler, const std::string& key) {
    io::JsonObject k = scheduler.object(key);
    if (k.string("source").empty()) k.fail("source", "must say where the engine sets this value");
    return k;
}

std::int64_t count_knob(io::JsonObject& scheduler, const std::string& key, std::int64_t most) {
    io::JsonObject k = knob(scheduler, key);
    const std::int64_t value = k.positive_int("value");
    if (value > most) k.fail("value", "expected at most " + std::to_string(most));
    k.finish();
    return value;
}

bool flag_knob(io::JsonObject& scheduler, const std::string& key) {
    io::JsonObject k = knob(scheduler, key);
    if (!k.raw("value").is_boolean()) k.fail("value", "expected true or false");
    const bool value = k.boolean("value", false);
    k.finish();
    return value;
}

// One of `choices` (their names in the file), as its index.
std::size_t choice_knob(io::JsonObject& scheduler, const std::string& key, const std::vector<std::string>& choices) {
    io::JsonObject k = knob(scheduler, key);
    const std::string value = k.string("value");
    k.finish();
    for (std::size_t i = 0; i < choices.size(); ++i)
        if (choices[i] == value) return i;
    std::string known;
    for (const auto& c : choices) known += (known.empty() ? "\"" : ", \"") + c + "\"";
    scheduler.fail(key, "expected one of " + known + ", found \"" + value + "\"");
}

}  // namespace

SchedulerSpec load_engine_file(const std::filesystem::path& path) {
    io::JsonFile file(path, "ridgeline.engine/1");
    io::JsonObject& root = file.root();
    SchedulerSpec spec;
    std::tie(spec.engine, std::ignore) = io::read_named(root);
    spec.version = root.string("version");
    (void)root.string("repository");
    (void)root.string("commit");
    io::JsonObject scheduler = root.object("scheduler");
    spec.max_seqs = count_knob(scheduler, "max_seqs", 1'000'000);
    spec.max_batched_tokens = count_knob(scheduler, "max_batched_tokens", 10'000'000);
    spec.prefill_chunk_tokens = count_knob(scheduler, "prefill_chunk_tokens", 10'000'000);
    spec.kv_block_tokens = count_knob(scheduler, "kv_block_tokens", 65'536);
    spec.chunked_prefill = flag_knob(scheduler, "chunked_prefill");
    spec.mixed_batches = flag_knob(scheduler, "mixed_batches");
    {
        io::JsonObject k = knob(scheduler, "kv_memory_fraction");
        spec.kv_memory_fraction = k.positive_number("value");
        if (spec.kv_memory_fraction >= 1) k.fail("value", "a fraction of memory must lie in (0, 1)");
        k.finish();
    }
    spec.kv_memory_basis = static_cast<KvMemoryBasis>(choice_knob(scheduler, "kv_memory_basis", {"hbm", "free_after_weights"}));
    spec.kv_admission = static_cast<KvAdmission>(choice_knob(scheduler, "kv_admission", {"on_demand", "reserve_whole"}));
    if (spec.max_batched_tokens < spec.kv_block_tokens)
        scheduler.fail("max_batched_tokens", "an iteration's " + std::to_string(spec.max_batched_tokens) +
                                                 " tokens are fewer than one cache block of " + std::to_string(spec.kv_block_tokens));
    if (spec.max_batched_tokens < spec.prefill_chunk_tokens)
        scheduler.fail("max_batched_tokens", "an iteration's " + std::to_string(spec.max_batched_tokens) +
                                                 " tokens are fewer than one prompt chunk of " + std::to_string(spec.prefill_chunk_tokens));
    if (spec.mixed_batches && spec.max_batched_tokens < spec.max_seqs && !spec.chunked_prefill)
        scheduler.fail("max_batched_tokens", "fewer tokens an iteration than running sequences, without chunked prefill: decodes would starve prompts");
    scheduler.finish();
    root.finish();
    return spec;
}

std::vector<CatalogEntry> list_engines(const std::filesystem::path& data_dir) { return io::list_catalog(data_dir / "engines"); }

std::string default_engine_name(const ChipSpec& chip) {
    const bool smaller = chip.hbm_bytes < 70.0 * 1024 * 1024 * 1024 || chip.name.rfind("a100", 0) == 0;
    return smaller ? "vllm-smaller-gpus" : "vllm";
}

SchedulerSpec resolve_engine(const std::string& name_or_path, const std::filesystem::path& data_dir) {
    return load_engine_file(io::catalog_file(name_or_path, list_engines(data_dir), "engine"));
}

}  // namespace ridgeline
