#include "stack/engine_file.hpp"

#include <tuple>
#include <type_traits>

#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

// A knob is {"value": ..., "source": "where the engine sets it"}.
io::JsonObject knob(io::JsonObject& scheduler, const std::string& key) {
    io::JsonObject k = scheduler.object(key);
    if (k.string("source").empty()) k.fail("source", "must say where the engine sets this value");
    return k;
}

// The index of `value` among a row's choices.
std::size_t choice_index(io::JsonObject& scheduler, const SchedulerKnob& row, const std::string& value) {
    std::string known;
    for (std::size_t i = 0; !scheduler_choice(row.choices, i).empty(); ++i) {
        const std::string_view name = scheduler_choice(row.choices, i);
        if (name == value) return i;
        known += (known.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    }
    scheduler.fail(row.key, "expected one of " + known + ", found \"" + value + "\"");
}

// One row of kSchedulerKnobs into `spec`.
void read_knob(io::JsonObject& scheduler, const SchedulerKnob& row, SchedulerSpec& spec) {
    io::JsonObject k = knob(scheduler, row.key);
    std::visit(
        [&](auto member) {
            using T = std::remove_reference_t<decltype(spec.*member)>;
            if constexpr (std::is_enum_v<T>) {
                const std::string value = k.string("value");
                k.finish();
                spec.*member = static_cast<T>(choice_index(scheduler, row, value));
                return;
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                spec.*member = k.positive_int("value");
                if (spec.*member > row.max) k.fail("value", "expected at most " + std::to_string(row.max));
            } else if constexpr (std::is_same_v<T, bool>) {
                if (!k.raw("value").is_boolean()) k.fail("value", "expected true or false");
                spec.*member = k.boolean("value", false);
            } else {
                static_assert(std::is_same_v<T, double>);
                spec.*member = k.positive_number("value");
                if (spec.*member >= 1) k.fail("value", "a fraction of memory must lie in (0, 1)");
            }
            k.finish();
        },
        row.member);
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
    for (const SchedulerKnob& row : kSchedulerKnobs) read_knob(scheduler, row, spec);
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
