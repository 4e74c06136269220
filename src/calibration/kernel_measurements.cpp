#include "calibration/kernel_measurements.hpp"

#include "calibration/kernel_measurements_json.hpp"
#include "io/json_reader.hpp"

namespace ridgeline::calibration {

namespace {

// Every entry of the array `key` as an object named key[i] in errors.
template <class Read>
void for_each_item(io::JsonObject& parent, const std::string& key, Read&& read) {
    if (!parent.has(key)) return;
    const nlohmann::json& array = parent.raw(key);
    if (!array.is_array()) parent.fail(key, "expected an array");
    for (std::size_t i = 0; i < array.size(); ++i) {
        io::JsonObject item(array[i], parent.origin(), parent.field_path(key) + "[" + std::to_string(i) + "]");
        read(item);
        item.finish();
    }
}

// Kernel dimensions beyond any LLM's are typos (or hostile): 1 .. 2^24.
std::int64_t dimension(io::JsonObject& object, const std::string& key) {
    const std::int64_t value = object.positive_int(key);
    if (value > (std::int64_t{1} << 24)) object.fail(key, "expected at most 16777216");
    return value;
}

// A measured time: positive and below an hour (a kernel is microseconds to seconds).
double seconds(io::JsonObject& object, const std::string& key) {
    const double value = object.positive_number(key);
    if (value > 3600) object.fail(key, "expected a kernel time below 3600 s");
    return value;
}

}  // namespace

KernelMeasurements read_kernel_measurements(io::JsonObject& root) {
    KernelMeasurements m;
    if (auto p = root.optional_object("provenance")) {
        m.device = p->string("device");
        m.software = p->optional_string("software").value_or("");
        m.date = p->optional_string("date").value_or("");
        for (const std::string& key : p->keys()) p->allow(key);  // method, notes: free text
    }
    for_each_item(root, "gemm", [&](io::JsonObject& g) {
        const std::string text = g.string("dtype");
        // "fp8_e4m3", "fp8_e5m2": one fp8 tensor-core rate.
        const auto dtype = parse_dtype(text.rfind("fp8", 0) == 0 ? "fp8" : text);
        if (!dtype) g.fail("dtype", "unknown dtype \"" + text + "\"");
        m.gemms.push_back({*dtype, dimension(g, "M"), dimension(g, "K"), dimension(g, "N"), seconds(g, "seconds")});
        g.allow("tflops");
        g.allow("kernel");
    });
    for_each_item(root, "attention", [&](io::JsonObject& a) {
        AttentionSample s;
        s.family = a.string("kernel");
        s.causal = a.boolean("causal", true);
        s.batch = dimension(a, "batch");
        s.q_heads = dimension(a, "q_heads");
        s.kv_heads = dimension(a, "kv_heads");
        if (s.kv_heads > s.q_heads) a.fail("kv_heads", "expected at most q_heads (" + std::to_string(s.q_heads) + ")");
        s.head_dim = dimension(a, "head_dim");
        s.seq = dimension(a, "seq");
        s.forward_s = seconds(a, "forward_s");
        s.forward_backward_s = seconds(a, "forward_backward_s");
        if (s.forward_backward_s <= s.forward_s) a.fail("forward_backward_s", "expected more than forward_s");
        if (a.has("dtype") && a.string("dtype") != "bf16") a.fail("dtype", "only bf16 attention is modelled");
        for (const char* key : {"forward_tflops", "forward_backward_tflops", "flops_convention"}) a.allow(key);
        m.attention.push_back(s);
    });
    if (auto copy = root.optional_object("copy")) {
        const nlohmann::json& rates = copy->raw("bytes_moved_per_s_read_plus_write");
        if (!rates.is_array() || rates.empty()) copy->fail("bytes_moved_per_s_read_plus_write", "expected a non-empty array of rates");
        for (std::size_t i = 0; i < rates.size(); ++i) {
            const std::string field = "bytes_moved_per_s_read_plus_write[" + std::to_string(i) + "]";
            if (!rates[i].is_number() || !(rates[i].get<double>() >= io::range::bandwidth_Bps.min) ||
                !(rates[i].get<double>() <= io::range::bandwidth_Bps.max))
                copy->fail(field, "expected a bandwidth in B/s within the physical range");
            m.copy_Bps.push_back(rates[i].get<double>());
        }
        copy->allow("what");
        copy->finish();
    }
    for_each_item(root, "memory_bound", [&](io::JsonObject& k) {
        MemoryBoundSample s{k.string("kernel"), k.positive_number("bytes"), seconds(k, "seconds")};
        for (const char* key : {"tokens", "note", "bytes_per_s", "implementation"}) k.allow(key);
        m.memory_bound.push_back(s);
    });
    // Grouped GEMMs are checked against the dense model (tests), not fitted: known, not read.
    root.allow("grouped_gemm");
    return m;
}

KernelMeasurements load_kernel_measurements(const std::filesystem::path& path) {
    const nlohmann::json document = io::parse_json_file(path);
    io::JsonObject root(document, path.string());
    root.require_format(kKernelMeasurementsFormat);
    KernelMeasurements m = read_kernel_measurements(root);
    root.finish();
    if (m.empty()) root.fail("gemm", "no kernel measurements in the file");
    return m;
}

nlohmann::ordered_json kernel_measurements_object(const KernelMeasurements& m) {
    nlohmann::ordered_json doc;
    doc["provenance"] = {{"device", m.device}, {"software", m.software}, {"date", m.date}};
    doc["gemm"] = nlohmann::ordered_json::array();
    for (const auto& g : m.gemms)
        doc["gemm"].push_back({{"dtype", dtype_name(g.dtype)}, {"M", g.m}, {"K", g.k}, {"N", g.n}, {"seconds", g.time_s}});
    doc["attention"] = nlohmann::ordered_json::array();
    for (const auto& a : m.attention)
        doc["attention"].push_back({{"kernel", a.family}, {"causal", a.causal}, {"batch", a.batch}, {"q_heads", a.q_heads},
                                    {"kv_heads", a.kv_heads}, {"head_dim", a.head_dim}, {"seq", a.seq},
                                    {"forward_s", a.forward_s}, {"forward_backward_s", a.forward_backward_s}});
    if (!m.copy_Bps.empty()) doc["copy"] = {{"bytes_moved_per_s_read_plus_write", m.copy_Bps}};
    doc["memory_bound"] = nlohmann::ordered_json::array();
    for (const auto& k : m.memory_bound)
        doc["memory_bound"].push_back({{"kernel", k.kernel}, {"bytes", k.bytes}, {"seconds", k.seconds}});
    return doc;
}

}  // namespace ridgeline::calibration
