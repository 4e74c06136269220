#include "hardware/settings.hpp"

#include <functional>
#include <optional>
#include <sstream>

#include "core/error.hpp"
#include "io/physical_range.hpp"
#include "io/quantity_text.hpp"

namespace ridgeline {

namespace {

using io::Quantity;

// A settable figure: where it lives, what it measures, its plausible range, and whether it is a
// link of the interconnect (which a custom topology file gives instead).
struct Field {
    std::vector<std::string> paths;  // canonical first (the file's own field path), then short forms
    Quantity quantity;
    io::PhysicalRange range;
    bool link = false;
    // The figure to change, or nullptr where this hardware has no such part.
    std::function<double*(Hardware&)> locate;
};

double* in_system_operations(Hardware& h, std::optional<double> SystemOperations::*member) {
    if (!h.system) return nullptr;
    if (!h.system->operations) h.system->operations = SystemOperations{};
    auto& value = (*h.system->operations).*member;
    if (!value) value = 0.0;
    return &*value;
}

const std::vector<Field>& fields() {
    static const std::vector<Field> table = [] {
        std::vector<Field> t;
        for (Dtype dtype : kAllDtypes) {
            const std::string name(dtype_name(dtype));
            t.push_back({{"chip.peak_flops_per_s." + name, "chip.peak." + name}, Quantity::flops_per_s, io::range::flops_per_s, false,
                         [dtype](Hardware& h) { return h.chip.supports(dtype) ? &h.chip.peak_flops_per_s[index_of(dtype)] : nullptr; }});
        }
        t.push_back({{"chip.hbm_bytes", "chip.hbm.capacity"}, Quantity::bytes, io::range::memory_bytes, false,
                     [](Hardware& h) { return &h.chip.hbm_bytes; }});
        t.push_back({{"chip.hbm_bw_Bps", "chip.hbm.bandwidth"}, Quantity::bandwidth, io::range::bandwidth_Bps, false,
                     [](Hardware& h) { return &h.chip.hbm_bw_Bps; }});
        t.push_back({{"chip.host_link_Bps", "chip.host_link.bandwidth"}, Quantity::bandwidth, io::range::bandwidth_Bps, false,
                     [](Hardware& h) { return &h.chip.host_link_Bps; }});
        t.push_back({{"chip.interconnect.nvlink.bw_per_chip_Bps_one_way", "chip.nvlink.bandwidth"}, Quantity::bandwidth,
                     io::range::bandwidth_Bps, true,
                     [](Hardware& h) { return h.chip.nvlink ? &h.chip.nvlink->bw_per_chip_Bps_one_way : nullptr; }});
        t.push_back({{"chip.interconnect.nvlink.hop_latency_s", "chip.nvlink.latency"}, Quantity::seconds, io::range::latency_s, true,
                     [](Hardware& h) { return h.chip.nvlink ? &h.chip.nvlink->hop_latency_s : nullptr; }});
        t.push_back({{"chip.interconnect.ici.link_bw_Bps_one_way", "chip.ici.bandwidth"}, Quantity::bandwidth,
                     io::range::bandwidth_Bps, true,
                     [](Hardware& h) { return h.chip.ici ? &h.chip.ici->link_bw_Bps_one_way : nullptr; }});
        t.push_back({{"chip.interconnect.ici.hop_latency_s", "chip.ici.latency"}, Quantity::seconds, io::range::latency_s, true,
                     [](Hardware& h) { return h.chip.ici ? &h.chip.ici->hop_latency_s : nullptr; }});
        t.push_back({{"chip.interconnect.scale_out.bw_per_chip_Bps_one_way", "system.scale_out.bandwidth", "chip.scale_out.bandwidth"},
                     Quantity::bandwidth, io::range::bandwidth_Bps, true,
                     [](Hardware& h) { return h.chip.scale_out.bw_per_chip_Bps_one_way > 0 ? &h.chip.scale_out.bw_per_chip_Bps_one_way : nullptr; }});
        t.push_back({{"chip.interconnect.scale_out.latency_s", "system.scale_out.latency", "chip.scale_out.latency"}, Quantity::seconds,
                     io::range::latency_s, true,
                     [](Hardware& h) { return h.chip.scale_out.bw_per_chip_Bps_one_way > 0 ? &h.chip.scale_out.latency_s : nullptr; }});
        t.push_back({{"chip.price_usd_per_chip_hour", "chip.price"}, Quantity::usd_per_hour, io::range::price_usd_per_hour, false,
                     [](Hardware& h) {
                         if (!h.chip.price_usd_per_chip_hour) h.chip.price_usd_per_chip_hour = 0.0;
                         return &*h.chip.price_usd_per_chip_hour;
                     }});
        t.push_back({{"chip.power.max_w"}, Quantity::watts, io::range::power_w, false,
                     [](Hardware& h) { return h.chip.power ? &h.chip.power->max_w : nullptr; }});
        t.push_back({{"system.scale_out.oversubscription", "system.oversubscription"}, Quantity::plain, io::range::oversubscription, true,
                     [](Hardware& h) { return h.system ? &h.system->oversubscription : nullptr; }});
        t.push_back({{"system.operations.failures_per_chip_hour"}, Quantity::plain, io::range::failure_rate_per_chip_hour, false,
                     [](Hardware& h) { return in_system_operations(h, &SystemOperations::failures_per_chip_hour); }});
        t.push_back({{"system.operations.restart_s"}, Quantity::seconds, io::range::restart_s, false,
                     [](Hardware& h) { return in_system_operations(h, &SystemOperations::restart_s); }});
        t.push_back({{"system.operations.checkpoint_write_Bps_per_host"}, Quantity::bandwidth, io::range::bandwidth_Bps, false,
                     [](Hardware& h) { return in_system_operations(h, &SystemOperations::checkpoint_write_Bps_per_host); }});
        t.push_back({{"system.operations.host_w"}, Quantity::watts, io::range::power_w, false,
                     [](Hardware& h) { return in_system_operations(h, &SystemOperations::host_w); }});
        t.push_back({{"system.operations.pue"}, Quantity::plain, io::range::pue, false,
                     [](Hardware& h) { return in_system_operations(h, &SystemOperations::pue); }});
        return t;
    }();
    return table;
}

std::string number(double value) {
    std::ostringstream text;
    text << value;
    return text.str();
}

std::string known_paths() {
    std::string list;
    for (const Field& field : fields()) list += (list.empty() ? "" : ", ") + field.paths.back();
    return list;
}

}  // namespace

std::vector<AppliedSetting> apply_settings(Hardware& hardware, const std::vector<std::string>& settings, bool links_from_file) {
    std::vector<AppliedSetting> applied;
    for (const std::string& setting : settings) {
        const std::size_t equals = setting.find('=');
        const std::string path = setting.substr(0, equals);
        if (equals == std::string::npos || equals == 0 || equals + 1 == setting.size())
            throw InputError("--set", "", "expected PATH=VALUE such as chip.hbm.bandwidth=4.8TB/s, found \"" + setting + "\"");
        const Field* field = nullptr;
        for (const Field& f : fields())
            for (const std::string& name : f.paths)
                if (name == path) field = &f;
        const std::string flag = "--set " + path;
        if (field == nullptr) throw InputError("--set", "", "unknown path \"" + path + "\"; known: " + known_paths());
        if (field->link && links_from_file)
            throw InputError(flag, "", "the custom topology file gives the links; change them there");
        const double value = io::parse_quantity(setting.substr(equals + 1), field->quantity, flag);
        if (value < field->range.min || value > field->range.max)
            throw InputError(flag, "", number(value) + " " + field->range.unit + " is outside the plausible range [" +
                                           number(field->range.min) + ", " + number(field->range.max) + "]");
        double* target = field->locate(hardware);
        if (target == nullptr)
            throw InputError(flag, "", "hardware " + hardware.chip.name + (hardware.system ? " (" + hardware.system->name + ")" : "") +
                                           " has no such part");
        applied.push_back({field->paths.front(), *target, value, field->range.unit, ""});
        *target = value;
    }
    return applied;
}

}  // namespace ridgeline
