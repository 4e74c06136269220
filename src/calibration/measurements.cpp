#include "calibration/measurements.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "calibration/kernel_measurements_json.hpp"
#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace ridgeline::calibration {

namespace {

// A GEMM dimension: at most the largest a kernel model takes.
std::int64_t dimension(io::JsonObject& o, const std::string& key) {
    const std::int64_t value = o.positive_int(key);
    if (static_cast<double>(value) > io::range::kernel_dimension.max)
        o.fail(key, std::to_string(value) + " is past any GEMM dimension timed (at most " + std::to_string(static_cast<long long>(io::range::kernel_dimension.max)) + ")");
    return value;
}

// Bytes moved by one call: at most any device's memory.
double size_bytes(io::JsonObject& o, const std::string& key) {
    const double value = o.positive_number(key);
    if (value > io::range::memory_bytes.max) o.fail(key, "more bytes than any device holds (at most 1e15)");
    return value;
}

// A measurement whose size over its time is a rate no chip or link reaches is a wrong time.
void at_most_rate(const io::JsonObject& o, double rate, const io::PhysicalRange& range) {
    if (rate > range.max) {
        std::ostringstream text;
        text << "the time implies " << rate << " " << range.unit << ", past any chip or link (at most " << range.max << " " << range.unit << ")";
        o.fail("time_s", text.str());
    }
}

io::JsonObject item(const nlohmann::json& array, std::size_t i, const io::JsonObject& parent, const std::string& key) {
    return io::JsonObject(array[i], parent.origin(), key + "[" + std::to_string(i) + "]");
}

const nlohmann::json& array_field(io::JsonObject& root, const std::string& key) {
    const nlohmann::json& value = root.raw(key);
    if (!value.is_array()) root.fail(key, "expected an array");
    return value;
}

CollectiveKind collective_kind(io::JsonObject& object) {
    const std::string text = object.string("kind");
    const auto kind = parse_collective(text);
    if (!kind || *kind == CollectiveKind::broadcast)
        object.fail("kind", "expected allgather, reducescatter, allreduce, alltoall or permute, found \"" + text + "\"");
    return *kind;
}

std::string read_first_line(const std::string& path, const std::string& prefix) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(prefix, 0) == 0) {
            const auto colon = line.find(':');
            std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(" \t"));
            return value;
        }
    return "";
}

double size_text_bytes(const std::string& text) {
    // "32768K", "512 KB", "8192 kB"
    std::istringstream in(text);
    double value = 0;
    std::string unit;
    in >> value >> unit;
    if (unit.empty() && !text.empty() && (text.back() == 'K' || text.back() == 'M')) unit = text.substr(text.size() - 1);
    if (!unit.empty() && (unit[0] == 'K' || unit[0] == 'k')) value *= 1024;
    if (!unit.empty() && unit[0] == 'M') value *= 1024 * 1024;
    return value;
}

}  // namespace

Measurements load_measurements(const std::filesystem::path& path) {
    io::JsonFile file(path, kCalibrationFormat);
    io::JsonObject& root = file.root();
    Measurements m;
    {
        auto p = root.object("provenance");
        m.provenance.host = p.string("host");
        m.provenance.cpu_model = p.string("cpu_model");
        m.provenance.cores = p.positive_int("cores");
        m.provenance.device = p.optional_string("device").value_or("");
        m.provenance.memory_bytes = p.positive_number("memory_bytes");
        m.provenance.cache_bytes = p.positive_number("cache_bytes");
        m.provenance.libraries = p.string("libraries");
        m.provenance.date = p.string("date");
        m.provenance.backend = p.string("backend");
        m.provenance.devices = p.positive_int("devices");
        p.allow("ranges");
        p.finish();
    }
    const nlohmann::json& gemms = array_field(root, "gemms");
    for (std::size_t i = 0; i < gemms.size(); ++i) {
        auto g = item(gemms, i, root, "gemms");
        const std::int64_t rows = dimension(g, "m"), inner = dimension(g, "k"), cols = dimension(g, "n");
        const double time_s = g.sourced_in("time_s", io::range::measured_time_s);
        at_most_rate(g, 2.0 * static_cast<double>(rows) * static_cast<double>(inner) * static_cast<double>(cols) / time_s, io::range::flops_per_s);
        m.gemms.push_back({rows, inner, cols, time_s});
        g.finish();
    }
    const nlohmann::json& copies = array_field(root, "copies");
    for (std::size_t i = 0; i < copies.size(); ++i) {
        auto c = item(copies, i, root, "copies");
        const double bytes = size_bytes(c, "bytes"), time_s = c.sourced_in("time_s", io::range::measured_time_s);
        at_most_rate(c, 2.0 * bytes / time_s, io::range::bandwidth_Bps);  // read and written
        m.copies.push_back({bytes, time_s});
        c.finish();
    }
    const nlohmann::json& collectives = array_field(root, "collectives");
    for (std::size_t i = 0; i < collectives.size(); ++i) {
        auto c = item(collectives, i, root, "collectives");
        CollectiveSample sample;
        sample.kind = collective_kind(c);
        sample.devices = c.positive_int("devices");
        if (sample.devices > 1'000'000) c.fail("devices", "expected at most 1000000");
        sample.bytes = size_bytes(c, "bytes");
        sample.time_s = c.sourced_in("time_s", io::range::measured_time_s);
        at_most_rate(c, sample.bytes / sample.time_s, io::range::bandwidth_Bps);
        c.finish();
        m.collectives.push_back(sample);
    }
    const nlohmann::json& sharded = array_field(root, "sharded");
    for (std::size_t i = 0; i < sharded.size(); ++i) {
        auto s = item(sharded, i, root, "sharded");
        ShardedSample sample;
        const std::string kind = s.string("kind");
        const auto parsed = parse_sharded_kind(kind);
        if (!parsed) s.fail("kind", "unknown sharded case \"" + kind + "\"");
        sample.shape.kind = *parsed;
        sample.shape.m = s.positive_int("m");
        sample.shape.k = s.positive_int("k");
        sample.shape.n = s.positive_int("n");
        sample.shape.f = s.non_negative_int("f", 0);
        const auto devices = s.positive_int("devices");
        if (devices > 1'000'000) s.fail("devices", "expected at most 1000000");
        sample.shape.devices = static_cast<int>(devices);
        sample.time_s = s.sourced_in("time_s", io::range::measured_time_s);
        s.finish();
        try {
            (void)case_work(sample.shape);
        } catch (const InputError& e) {
            s.fail("devices", e.what());
        }
        m.sharded.push_back(sample);
    }
    if (auto kernels = root.optional_object("kernels")) {
        m.kernels = read_kernel_measurements(*kernels);
        kernels->finish();
    }
    root.finish();
    return m;
}

KernelMeasurements kernel_measurements_of(const Measurements& m) {
    KernelMeasurements k = m.kernels;
    if (k.device.empty()) k.device = m.provenance.device.empty() ? m.provenance.cpu_model : m.provenance.device;
    if (k.software.empty()) k.software = m.provenance.libraries;
    if (k.date.empty()) k.date = m.provenance.date;
    // Copies of at least four caches' worth stream from memory; smaller ones may not.
    for (const CopySample& c : m.copies)
        if (c.bytes >= 4.0 * m.provenance.cache_bytes) k.copy_Bps.push_back(2.0 * c.bytes / c.time_s);
    return k;
}

std::string measurements_json(const Measurements& m) {
    nlohmann::ordered_json doc;
    doc["schema"] = kCalibrationFormat;
    const Provenance& p = m.provenance;
    auto& prov = doc["provenance"];
    prov["host"] = p.host;
    prov["cpu_model"] = p.cpu_model;
    prov["cores"] = p.cores;
    if (!p.device.empty()) prov["device"] = p.device;
    prov["memory_bytes"] = p.memory_bytes;
    prov["cache_bytes"] = p.cache_bytes;
    prov["libraries"] = p.libraries;
    prov["date"] = p.date;
    prov["backend"] = p.backend;
    prov["devices"] = p.devices;
    // The ranges measured so far, for readers (recomputed from the samples when fitting).
    auto& ranges = prov["ranges"];
    if (!m.gemms.empty()) {
        std::int64_t low = m.gemms.front().m, high = low;
        for (const auto& g : m.gemms) {
            low = std::min({low, g.m, g.k, g.n});
            high = std::max({high, g.m, g.k, g.n});
        }
        ranges["gemm_dim_min"] = low;
        ranges["gemm_dim_max"] = high;
    }
    if (!m.collectives.empty()) {
        double low = m.collectives.front().bytes, high = low;
        for (const auto& c : m.collectives) {
            low = std::min(low, c.bytes);
            high = std::max(high, c.bytes);
        }
        ranges["message_bytes_min"] = low;
        ranges["message_bytes_max"] = high;
    }
    if (!m.copies.empty()) {
        ranges["copy_bytes_min"] = m.copies.front().bytes;
        ranges["copy_bytes_max"] = m.copies.back().bytes;
    }
    doc["gemms"] = nlohmann::json::array();
    for (const auto& g : m.gemms) doc["gemms"].push_back({{"m", g.m}, {"k", g.k}, {"n", g.n}, {"time_s", g.time_s}});
    doc["copies"] = nlohmann::json::array();
    for (const auto& c : m.copies) doc["copies"].push_back({{"bytes", c.bytes}, {"time_s", c.time_s}});
    doc["collectives"] = nlohmann::json::array();
    for (const auto& c : m.collectives)
        doc["collectives"].push_back(
            {{"kind", collective_name(c.kind)}, {"devices", c.devices}, {"bytes", c.bytes}, {"time_s", c.time_s}});
    doc["sharded"] = nlohmann::json::array();
    for (const auto& s : m.sharded)
        doc["sharded"].push_back({{"kind", sharded_kind_name(s.shape.kind)},
                                  {"m", s.shape.m},
                                  {"k", s.shape.k},
                                  {"n", s.shape.n},
                                  {"f", s.shape.f},
                                  {"devices", s.shape.devices},
                                  {"time_s", s.time_s}});
    if (!m.kernels.empty()) doc["kernels"] = kernel_measurements_object(m.kernels);
    return doc.dump(2) + "\n";
}

Provenance host_provenance() {
    Provenance p;
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) == 0) p.host = name.data();
    p.cpu_model = read_first_line("/proc/cpuinfo", "model name");
    if (p.cpu_model.empty()) p.cpu_model = "unknown";
    if (p.host.empty()) p.host = "unknown";
    p.cores = std::max(1u, std::thread::hardware_concurrency());
    p.memory_bytes = size_text_bytes(read_first_line("/proc/meminfo", "MemTotal"));
    std::ifstream l3("/sys/devices/system/cpu/cpu0/cache/index3/size");
    std::string text;
    if (l3 >> text) p.cache_bytes = size_text_bytes(text);
    if (p.cache_bytes <= 0) p.cache_bytes = size_text_bytes(read_first_line("/proc/cpuinfo", "cache size"));
    if (p.cache_bytes <= 0) p.cache_bytes = 1;  // unknown; kept positive so the file loads
    if (p.memory_bytes <= 0) p.memory_bytes = 1;
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::array<char, 32> date{};
    std::strftime(date.data(), date.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
    p.date = date.data();
    return p;
}

}  // namespace ridgeline::calibration
