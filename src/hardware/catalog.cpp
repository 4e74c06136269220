#include "hardware/catalog.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "core/error.hpp"
#include "io/catalog_lookup.hpp"
#include "io/json_reader.hpp"

namespace ridgeline {

namespace {

constexpr const char* kChipFormat = "ridgeline.chip/1";
constexpr const char* kSystemFormat = "ridgeline.system/1";

int small_positive_int(io::JsonObject& object, const std::string& key) {
    const auto count = object.sourced_positive_int(key);
    if (count > 1024) object.fail(key, "expected at most 1024");
    return static_cast<int>(count);
}

// The measured share of a link's rate that collectives reach over it (absent: the whole rate).
double collective_fraction(io::JsonObject& link) {
    const double value = link.optional_sourced_positive_number("collective_fraction").value_or(1.0);
    if (value > 1.0) link.fail("collective_fraction", "expected a fraction in (0, 1]");
    return value;
}

ScaleOutSpec parse_chip_scale_out(io::JsonObject object) {
    ScaleOutSpec spec;
    spec.kind = object.string("kind");
    spec.bw_per_chip_Bps_one_way = object.sourced_in("bw_per_chip_Bps_one_way", io::range::bandwidth_Bps);
    spec.latency_s = object.sourced_in("latency_s", io::range::latency_s);
    spec.collective_fraction = collective_fraction(object);
    object.finish();
    return spec;
}

// {"allreduce": {"streaming": 0.4, "cached": 1.3}, ...}: kinds as collective_name spells them,
// in CollectiveKind's order; a kind left out keeps 1 (the link's rate).
double read_fraction(io::JsonObject& object, const std::string& key) {
    const double value = object.positive_number(key);
    if (value > 1.0) object.fail(key, "expected a fraction in (0, 1]");
    return value;
}

KernelModel read_kernels(io::JsonObject& block) {
    KernelModel k;
    k.file = block.origin();
    k.source = block.string("source");
    // Each part may say where it comes from (a fit, a cited benchmark, a derivation).
    auto gemm = block.object("gemm");
    (void)gemm.optional_string("source");
    k.gemm_launch_s = gemm.sourced_in("launch_s", io::range::latency_s);
    k.gemm_hbm_fraction = read_fraction(gemm, "hbm_fraction");
    auto dtypes = gemm.object("dtypes");
    for (const std::string& key : dtypes.keys()) {
        const auto dtype = parse_dtype(key);
        if (!dtype) dtypes.fail(key, "unknown dtype (known: fp32, tf32, bf16, fp16, fp8, int8, int4, fp4)");
        auto entry = dtypes.object(key);
        k.gemm[index_of(*dtype)] = GemmKernel{read_fraction(entry, "peak_fraction"), entry.sourced_in("half_rows", io::range::kernel_dimension)};
        entry.finish();
    }
    dtypes.finish();
    gemm.finish();
    if (auto split = block.optional_object("fp8_split_accumulation")) {
        k.fp8_split_accumulation_slowdown = split->sourced_in("slowdown", io::range::kernel_slowdown);
        split->allow("source");
        split->finish();
    }
    auto attention = block.object("attention");
    for (const std::string& family : attention.keys()) {
        auto entry = attention.object(family);
        (void)entry.optional_string("source");
        AttentionFamily f{family, {}, {}};
        for (auto [pass, out] : {std::pair{"forward", &f.forward}, std::pair{"backward", &f.backward}}) {
            auto part = entry.object(pass);
            *out = {read_fraction(part, "peak_fraction"), part.sourced_in("half_seq", io::range::kernel_dimension)};
            part.finish();
        }
        entry.finish();
        k.attention.push_back(f);
    }
    attention.finish();
    auto memory = block.object("memory_bound");
    (void)memory.optional_string("source");
    for (const std::string& kernel : memory.keys())
        if (kernel != "source") k.memory_bound.push_back({kernel, read_fraction(memory, kernel), 0.0});
    memory.finish();
    if (auto floors = block.optional_object("memory_bound_floor_s")) {
        (void)floors->optional_string("source");
        for (const std::string& kernel : floors->keys()) {
            if (kernel == "source") continue;
            const auto it = std::find_if(k.memory_bound.begin(), k.memory_bound.end(), [&](const MemoryBoundKernel& m) { return m.name == kernel; });
            if (it == k.memory_bound.end()) floors->fail(kernel, "a floor for a kernel memory_bound does not list");
            it->floor_s = floors->sourced_in(kernel, io::range::latency_s);
        }
        floors->finish();
        // A kernel without a floor of its own is at least one launch: the copy's.
        const auto copy = std::find_if(k.memory_bound.begin(), k.memory_bound.end(), [](const MemoryBoundKernel& m) { return m.name == "copy"; });
        if (copy != k.memory_bound.end())
            for (MemoryBoundKernel& m : k.memory_bound)
                if (m.floor_s == 0) m.floor_s = copy->floor_s;
    }
    block.finish();
    return k;
}

void read_collective_kinds(io::JsonObject& kinds, ChipEfficiency& e) {
    constexpr const char* kKinds[] = {"allgather", "reducescatter", "allreduce", "alltoall", "permute", "broadcast"};
    for (std::size_t k = 0; k < std::size(kKinds); ++k) {
        auto kind = kinds.optional_object(kKinds[k]);
        if (!kind) continue;
        e.collective_streaming[k] = kind->positive_number("streaming");
        if (e.collective_streaming[k] > 1.0) kind->fail("streaming", "expected a fraction of the link bandwidth in (0, 1]");
        e.collective_cached[k] = kind->has("cached") ? kind->positive_number("cached") : e.collective_streaming[k];
        kind->finish();
    }
    kinds.allow("source");
    kinds.finish();
}

}  // namespace

ChipSpec load_chip_file(const std::filesystem::path& path) {
    io::JsonFile file(path, kChipFormat);
    io::JsonObject& root = file.root();
    ChipSpec chip;
    std::tie(chip.name, chip.description) = io::read_named(root);
    const std::string kind = root.string("kind");
    if (kind == "tpu") chip.kind = ChipKind::tpu;
    else if (kind == "gpu") chip.kind = ChipKind::gpu;
    else root.fail("kind", "expected \"tpu\" or \"gpu\", found \"" + kind + "\"");
    chip.default_system = root.optional_string("default_system").value_or("");

    auto peaks = root.object("peak_flops_per_s");
    for (const std::string& key : peaks.keys()) {
        const auto dtype = parse_dtype(key);
        if (!dtype) peaks.fail(key, "unknown dtype (known: fp32, tf32, bf16, fp16, fp8, int8, int4, fp4)");
        chip.peak_flops_per_s[index_of(*dtype)] = peaks.sourced_in(key, io::range::flops_per_s);
    }
    if (!chip.supports(Dtype::bf16)) peaks.fail("bf16", "missing required field");
    // fp16 runs at the bf16 rate on every chip we model unless a file says otherwise.
    if (!chip.supports(Dtype::fp16)) chip.peak_flops_per_s[index_of(Dtype::fp16)] = chip.peak_flops(Dtype::bf16);
    peaks.finish();

    chip.hbm_bytes = root.sourced_in("hbm_bytes", io::range::memory_bytes);
    chip.hbm_bw_Bps = root.sourced_in("hbm_bw_Bps", io::range::bandwidth_Bps);
    chip.on_chip_memory_bytes = root.sourced_in("on_chip_memory_bytes", io::range::on_chip_bytes);
    if (auto vector = root.optional_object("vector_unit")) {
        VectorUnitSpec spec;
        spec.units = small_positive_int(*vector, "units");
        spec.lanes_per_unit = static_cast<int>(vector->sourced_positive_int("lanes_per_unit"));
        spec.clock_hz = vector->sourced_in("clock_hz", io::range::clock_Hz);
        spec.shared_memory_per_unit_bytes = vector->sourced_in("shared_memory_per_unit_bytes", io::range::on_chip_bytes);
        vector->finish();
        chip.vector_unit = spec;
    }
    chip.host_link_Bps = root.sourced_in("host_link_Bps", io::range::bandwidth_Bps);
    if (auto variation = root.optional_object("rank_variation")) {
        if (!variation->has("deterministic")) variation->fail("deterministic", "missing required field");
        chip.deterministic_step_time = variation->boolean("deterministic", false);
        if (variation->string("source").empty()) variation->fail("source", "expected where the claim comes from");
        variation->finish();
    }
    // An explicit null says no citable price was found; reports then say how to give one (--price).
    if (!(root.has("price_usd_per_chip_hour") && root.raw("price_usd_per_chip_hour").is_null()))
        chip.price_usd_per_chip_hour = root.optional_sourced_in("price_usd_per_chip_hour", io::range::price_usd_per_hour);
    if (auto power = root.optional_object("power")) {
        chip.power = ChipPower{power->optional_sourced_in("idle_w", io::range::power_w), power->sourced_in("max_w", io::range::power_w)};
        if (chip.power->idle_w && *chip.power->idle_w >= chip.power->max_w) power->fail("idle_w", "expected less than max_w");
        power->allow("source");
        power->finish();
    }
    if (auto efficiency = root.optional_object("efficiency")) {
        chip.efficiency_from_file = true;
        ChipEfficiency& e = chip.efficiency;
        const auto fraction = [&](const std::string& key, double fallback) {
            const double value = efficiency->optional_sourced_positive_number(key).value_or(fallback);
            if (value > 1.0) efficiency->fail(key, "expected a fraction in (0, 1]");
            return value;
        };
        e.matmul_max = fraction("matmul_max", 1.0);
        e.matmul_max_fp8 = fraction("matmul_max_fp8", e.matmul_max);
        e.matmul_half_dim = efficiency->optional_sourced_in("matmul_half_dim", io::range::kernel_dimension).value_or(0.0);
        e.attention = fraction("attention", 1.0);
        e.attention_half_seq = efficiency->optional_sourced_in("attention_half_seq", io::range::kernel_dimension).value_or(0.0);
        e.hbm = fraction("hbm", 1.0);
        e.collective = fraction("collective", 1.0);
        e.kernel_overhead_s = efficiency->optional_sourced_in("kernel_overhead_s", io::range::latency_s).value_or(0.0);
        e.matmul_output_passes = efficiency->optional_sourced_in("matmul_output_passes", io::range::kernel_passes).value_or(1.0);
        if (e.matmul_output_passes < 1.0) efficiency->fail("matmul_output_passes", "expected at least 1 (the output is written once)");
        if (auto kinds = efficiency->optional_object("collective_kinds")) read_collective_kinds(*kinds, e);
        efficiency->allow("origin");
        efficiency->finish();
    }

    if (auto kernels = root.optional_object("kernels")) chip.kernels = read_kernels(*kernels);

    if (auto range = root.optional_object("measured_range")) {
        MeasuredRange r;
        r.gemm_dim_min = range->positive_number("gemm_dim_min");
        r.gemm_dim_max = range->positive_number("gemm_dim_max");
        r.message_bytes_min = range->positive_number("message_bytes_min");
        r.message_bytes_max = range->positive_number("message_bytes_max");
        r.devices_max = range->positive_number("devices_max");
        if (r.gemm_dim_min > r.gemm_dim_max) range->fail("gemm_dim_min", "expected at most gemm_dim_max");
        if (r.message_bytes_min > r.message_bytes_max) range->fail("message_bytes_min", "expected at most message_bytes_max");
        range->allow("source");
        range->finish();
        chip.measured_range = r;
    }
    root.allow("calibration");  // fit details of a calibrated description, for readers

    auto interconnect = root.object("interconnect");
    if (auto ici = interconnect.optional_object("ici")) {
        IciSpec spec;
        spec.links_per_chip = small_positive_int(*ici, "links_per_chip");
        spec.torus_axes = small_positive_int(*ici, "torus_axes");
        spec.link_bw_Bps_one_way = ici->sourced_in("link_bw_Bps_one_way", io::range::bandwidth_Bps);
        spec.hop_latency_s = ici->sourced_in("hop_latency_s", io::range::latency_s);
        ici->finish();
        chip.ici = spec;
    }
    if (auto nvlink = interconnect.optional_object("nvlink")) {
        NvlinkSpec spec;
        spec.links_per_chip = small_positive_int(*nvlink, "links_per_chip");
        spec.bw_per_chip_Bps_one_way = nvlink->sourced_in("bw_per_chip_Bps_one_way", io::range::bandwidth_Bps);
        spec.hop_latency_s = nvlink->sourced_in("hop_latency_s", io::range::latency_s);
        spec.collective_fraction = collective_fraction(*nvlink);
        nvlink->finish();
        chip.nvlink = spec;
    }
    if (chip.kind == ChipKind::tpu && !chip.ici) interconnect.fail("ici", "missing required field for a TPU");
    if (chip.kind == ChipKind::gpu && !chip.nvlink) interconnect.fail("nvlink", "missing required field for a GPU");
    chip.scale_out = parse_chip_scale_out(interconnect.object("scale_out"));
    interconnect.finish();
    root.finish();
    return chip;
}

SystemSpec load_system_file(const std::filesystem::path& path) {
    io::JsonFile file(path, kSystemFormat);
    io::JsonObject& root = file.root();
    SystemSpec system;
    std::tie(system.name, system.description) = io::read_named(root);
    system.chip_name = root.string("chip");
    system.chips_per_host = small_positive_int(root, "chips_per_host");

    auto scale_up = root.object("scale_up");
    const std::string kind = scale_up.string("kind");
    if (kind == "torus") {
        system.scale_up.kind = ScaleUpSpec::Kind::torus;
        system.scale_up.torus_dims = scale_up.positive_int_list("dims");
        if (system.scale_up.torus_dims.size() > 4) scale_up.fail("dims", "expected at most 4 torus axes");
        system.scale_up.wrap_multiple_of = scale_up.positive_int("wrap_multiple_of");
        const std::string rule = scale_up.string("wrap_rule");
        if (rule == "per_axis") system.scale_up.wrap_rule = ScaleUpSpec::WrapRule::per_axis;
        else if (rule == "whole_slice") system.scale_up.wrap_rule = ScaleUpSpec::WrapRule::whole_slice;
        else scale_up.fail("wrap_rule", "expected \"per_axis\" or \"whole_slice\", found \"" + rule + "\"");
    } else if (kind == "switch") {
        system.scale_up.kind = ScaleUpSpec::Kind::switched;
        system.scale_up.domain_size = scale_up.positive_int("domain_size");
    } else {
        scale_up.fail("kind", "expected \"torus\" or \"switch\", found \"" + kind + "\"");
    }
    scale_up.allow("source");
    scale_up.finish();

    auto scale_out = root.object("scale_out");
    system.scale_out_kind = scale_out.string("kind");
    if (system.scale_out_kind != "dcn" && system.scale_out_kind != "fat_tree" && system.scale_out_kind != "rail_optimized")
        scale_out.fail("kind", "expected \"dcn\", \"fat_tree\" or \"rail_optimized\", found \"" + system.scale_out_kind + "\"");
    system.max_scale_out_domains = scale_out.optional_positive_int("max_nodes");
    if (scale_out.has("nodes_per_leaf")) system.domains_per_leaf = scale_out.sourced_positive_int("nodes_per_leaf");
    else scale_out.allow("nodes_per_leaf");
    system.oversubscription = scale_out.optional_sourced_in("oversubscription", io::range::oversubscription).value_or(1.0);
    if (system.oversubscription < 1.0) scale_out.fail("oversubscription", "expected a ratio >= 1 (downlink : uplink)");
    scale_out.allow("source");
    scale_out.finish();
    if (auto ops = root.optional_object("operations")) {
        SystemOperations o;
        o.failures_per_chip_hour = ops->optional_sourced_in("failures_per_chip_hour", io::range::failure_rate_per_chip_hour);
        o.restart_s = ops->optional_sourced_in("restart_s", io::range::restart_s);
        o.checkpoint_write_Bps_per_host = ops->optional_sourced_in("checkpoint_write_Bps_per_host", io::range::bandwidth_Bps);
        o.checkpoint_write_Bps_total = ops->optional_sourced_in("checkpoint_write_Bps_total", io::range::bandwidth_Bps);
        o.host_w = ops->optional_sourced_in("host_w", io::range::power_w);
        o.pue = ops->optional_sourced_in("pue", io::range::pue);
        ops->allow("source");
        ops->finish();
        system.operations = o;
    }
    root.finish();
    return system;
}

std::vector<CatalogEntry> list_chips(const std::filesystem::path& data_dir) {
    return io::list_catalog(data_dir / "hardware" / "chips");
}

std::vector<CatalogEntry> list_systems(const std::filesystem::path& data_dir) {
    return io::list_catalog(data_dir / "hardware" / "systems");
}

Hardware resolve_hardware(const std::string& name_or_path, const std::filesystem::path& data_dir) {
    const auto chips = list_chips(data_dir);
    const auto systems = list_systems(data_dir);
    const auto load_system_with_chip = [&](const std::filesystem::path& file) {
        Hardware hardware;
        hardware.system = load_system_file(file);
        const auto chip_entry = io::find_entry(chips, hardware.system->chip_name);
        if (!chip_entry)
            throw InputError(file.string(), "chip", "unknown chip \"" + hardware.system->chip_name + "\"");
        hardware.chip = load_chip_file(chip_entry->file);
        return hardware;
    };
    const auto load_chip_with_system = [&](const std::filesystem::path& file) {
        Hardware hardware;
        hardware.chip = load_chip_file(file);
        if (!hardware.chip.default_system.empty()) {
            const auto system_entry = io::find_entry(systems, hardware.chip.default_system);
            if (!system_entry)
                throw InputError(file.string(), "default_system",
                                 "unknown system \"" + hardware.chip.default_system + "\"");
            hardware.system = load_system_file(system_entry->file);
        }
        return hardware;
    };

    if (io::looks_like_path(name_or_path)) {
        const nlohmann::json document = io::parse_json_file(name_or_path);
        const std::string format = io::format_id(document);
        if (format == kSystemFormat) return load_system_with_chip(name_or_path);
        if (format == kChipFormat) return load_chip_with_system(name_or_path);
        throw InputError(name_or_path, io::kFormatKey,
                         std::string("expected \"") + kChipFormat + "\" or \"" + kSystemFormat + "\"");
    }
    if (const auto entry = io::find_entry(systems, name_or_path)) return load_system_with_chip(entry->file);
    if (const auto entry = io::find_entry(chips, name_or_path)) return load_chip_with_system(entry->file);
    std::vector<CatalogEntry> all = systems;
    all.insert(all.end(), chips.begin(), chips.end());
    throw InputError(kRequest, "hardware", "unknown hardware \"" + name_or_path + "\"; known: " + io::known_names(all));
}

void require_kernel_data(const ChipSpec& chip) {
    if (chip.has_kernel_data()) return;
    throw InputError(chip.name, "kernels", "no measured kernel data (neither a kernels nor an efficiency block), so no step or token can be "
                                           "priced on it; fit one with `ridgeline fit MEASUREMENTS --like " + chip.name + "` and use the file it writes");
}

}  // namespace ridgeline
