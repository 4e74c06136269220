// Calibration parts checked against values computed here: ring collectives against sums and
// copies worked in the test, fits against the parameters that generated synthetic measurements,
// predictions against the cost formulas written out by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/kernels.hpp"
#include "calibration/measurements.hpp"
#include "calibration/shm_comm.hpp"
#include "collective/link_bytes.hpp"
#include "core/error.hpp"
#include "hardware/catalog.hpp"
#include "report/calibration_reports.hpp"
#include "io/json_reader.hpp"
#include "io/safe_write.hpp"
#include "test_support.hpp"

using namespace ridgeline;
using namespace ridgeline::calibration;

namespace {

// Runs `body(comm)` on `devices` threads sharing one group.
template <class Body>
void on_threads(int devices, Body body, std::chrono::milliseconds timeout = std::chrono::milliseconds(20000)) {
    ShmGroup group(devices, timeout);
    std::vector<std::thread> threads;
    for (int rank = 0; rank < devices; ++rank)
        threads.emplace_back([&, rank] {
            ShmComm comm(group, rank);
            body(comm);
        });
    for (auto& t : threads) t.join();
}

float value(int rank, std::size_t i) { return static_cast<float>(rank + 1) * 10.0f + static_cast<float>(i % 7); }

}  // namespace

TEST_CASE("the CPU GEMM multiplies in every layout, through OpenBLAS where it is installed, opened only by calibration") {
    // A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]]: A.B = [[58, 64], [139, 154]] by hand.
    const std::vector<float> a_rows = {1, 2, 3, 4, 5, 6}, a_cols = {1, 4, 2, 5, 3, 6};
    const std::vector<float> b_rows = {7, 8, 9, 10, 11, 12}, b_cols = {7, 9, 11, 8, 10, 12};
    using calibration::Layout;
    for (const bool a_row : {true, false})
        for (const bool b_row : {true, false}) {
            std::vector<float> c(4, -1);
            calibration::matmul((a_row ? a_rows : a_cols).data(), a_row ? Layout::row_major : Layout::col_major,
                                (b_row ? b_rows : b_cols).data(), b_row ? Layout::row_major : Layout::col_major, c.data(), 2, 3, 2);
            CHECK(c == std::vector<float>{58, 64, 139, 154});
        }
    void* installed = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (installed == nullptr) installed = dlopen("libopenblas.so.0", RTLD_LAZY);
    if (installed != nullptr) CHECK(calibration::gemm_library().starts_with("OpenBLAS"));
    // Loading OpenBLAS starts its thread pool: the command-line tool must not need it to start.
    std::string needed;
    FILE* objdump = popen(("objdump -p " + std::string(RIDGELINE_BINARY)).c_str(), "r");
    REQUIRE(objdump != nullptr);
    std::array<char, 4096> chunk{};
    while (const std::size_t got = std::fread(chunk.data(), 1, chunk.size(), objdump)) needed.append(chunk.data(), got);
    pclose(objdump);
    REQUIRE(needed.find("NEEDED") != std::string::npos);
    CHECK(needed.find("libopenblas") == std::string::npos);
}

TEST_CASE("shared-memory ring all-reduce sums every device's data, also when chunks are uneven") {
    for (const int devices : {1, 2, 3, 4}) {
        for (const std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
            std::vector<std::vector<float>> results(static_cast<std::size_t>(devices));
            on_threads(devices, [&](Comm& comm) {
                std::vector<float> data(count);
                for (std::size_t i = 0; i < count; ++i) data[i] = value(comm.rank(), i);
                comm.all_reduce(data.data(), count);
                results[comm.rank()] = data;
            });
            for (int r = 0; r < devices; ++r)
                for (std::size_t i = 0; i < count; ++i) {
                    float expected = 0;
                    for (int j = 0; j < devices; ++j) expected += value(j, i);
                    CAPTURE(devices);
                    CAPTURE(count);
                    REQUIRE(results[r][i] == expected);
                }
        }
    }
}

TEST_CASE("shared-memory reduce-scatter, all-gather, all-to-all and send/recv move the right blocks") {
    const int devices = 3;
    const std::size_t count = 5;
    std::vector<std::vector<float>> scattered(devices), gathered(devices), exchanged(devices), received(devices);
    on_threads(devices, [&](Comm& comm) {
        const int r = comm.rank();
        std::vector<float> data(count * devices), out(count), all(count * devices), mine(count), swapped(count * devices), recv(count);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(r, i);
        for (std::size_t i = 0; i < count; ++i) mine[i] = static_cast<float>(100 * r + static_cast<int>(i));
        comm.all_gather(mine.data(), all.data(), count);
        comm.all_to_all(data.data(), swapped.data(), count);  // before reduce_scatter: that one destroys data
        comm.send_recv(mine.data(), recv.data(), count);
        comm.reduce_scatter(data.data(), out.data(), count);
        scattered[r] = out;
        gathered[r] = all;
        exchanged[r] = swapped;
        received[r] = recv;
        CHECK(comm.max(static_cast<double>(r)) == devices - 1);
    });
    for (int r = 0; r < devices; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t at = static_cast<std::size_t>(r) * count + i;
            CHECK(scattered[r][i] == value(0, at) + value(1, at) + value(2, at));
            const int left = (r + devices - 1) % devices;
            CHECK(received[r][i] == static_cast<float>(100 * left + static_cast<int>(i)));
            for (int j = 0; j < devices; ++j) {
                CHECK(gathered[r][static_cast<std::size_t>(j) * count + i] == static_cast<float>(100 * j + static_cast<int>(i)));
                // Block j of my output is block r of device j's input.
                CHECK(exchanged[r][static_cast<std::size_t>(j) * count + i] == value(j, static_cast<std::size_t>(r) * count + i));
            }
        }
    }
}

TEST_CASE("a collective whose peer never arrives times out instead of hanging") {
    ShmGroup group(2, std::chrono::milliseconds(200));
    ShmComm comm(group, 0);
    std::vector<float> data(4, 1.0f);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(comm.all_reduce(data.data(), data.size()), CollectiveTimeout);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    // Once broken, the group refuses at once.
    CHECK_THROWS_AS(comm.barrier(), CollectiveTimeout);
}

TEST_CASE("the alpha-beta fit recovers the latency and bandwidth that generated the times") {
    const double alpha_s = 7e-6, bandwidth_Bps = 3.5e9;
    std::vector<double> ones, bytes, times;
    int i = 0;
    for (double b = 4096; b <= 64e6; b *= 4, ++i) {
        ones.push_back(1.0);
        bytes.push_back(b);
        const double noise = 1.0 + ((i % 2 == 0) ? 0.01 : -0.01);  // +-1%, alternating
        times.push_back((alpha_s + b / bandwidth_Bps) * noise);
    }
    const LinearFit fit = fit_latency_bandwidth(ones, bytes, times, "synthetic");
    CHECK(fit.latency_s == doctest::Approx(alpha_s).scale(0).epsilon(0.03));
    CHECK(1.0 / fit.s_per_byte == doctest::Approx(bandwidth_Bps).scale(0).epsilon(0.03));
    CHECK(fit.residuals.max < 0.02);
    CHECK(fit.residuals.samples == static_cast<int>(times.size()));
    // Too few samples is the caller's error, not a NaN.
    CHECK_THROWS_AS((void)fit_latency_bandwidth({1.0}, {1.0}, {1.0}, "one"), InputError);
}

TEST_CASE("the GEMM fit recovers peak, tile half-dimension, output passes and overhead from synthetic GEMMs") {
    const double peak = 60e9, half_dim = 32, overhead_s = 3e-6, passes = 3, memory_s_per_byte = 1.0 / 4e9;
    std::vector<GemmSample> gemms;
    int memory_bound = 0;
    for (const std::int64_t m : {8, 64, 256, 1024, 2048})
        for (const std::int64_t k : {2, 16, 128, 1024})
            for (const std::int64_t n : {32, 512, 2048}) {
                const auto tile = [&](std::int64_t x) { return static_cast<double>(x) / (static_cast<double>(x) + half_dim); };
                const auto dm = static_cast<double>(m), dk = static_cast<double>(k), dn = static_cast<double>(n);
                const double compute_s = 2.0 * dm * dk * dn / (peak * tile(m) * tile(k) * tile(n));
                const double memory_s = 4.0 * (dm * dk + dk * dn + passes * dm * dn) * memory_s_per_byte;
                memory_bound += memory_s > compute_s ? 1 : 0;
                gemms.push_back({m, k, n, overhead_s + std::max(compute_s, memory_s)});
            }
    REQUIRE(memory_bound >= 3);  // the output passes are seen
    const GemmFit fit = fit_gemms(gemms, memory_s_per_byte);
    CHECK(fit.peak_flops_per_s == doctest::Approx(peak).scale(0).epsilon(0.02));     // the scan steps by 2^(1/64)
    CHECK(fit.half_dim == doctest::Approx(half_dim).scale(0).epsilon(0.05));         // the grid steps by 2^0.1 (7%)
    CHECK(fit.output_passes == passes);
    CHECK(fit.overhead_s == doctest::Approx(overhead_s).scale(0).epsilon(0.3));
    CHECK(fit.residuals.rms < 0.03);
}

TEST_CASE("the non-negative fit drops a term that would fit below zero") {
    // times = 2 x a + 3 x b exactly, plus a third column that only fits noise with a negative sign.
    const std::vector<double> a = {1, 2, 3, 4}, b = {4, 1, 2, 8}, c = {1, -1, 1, -1};
    std::vector<double> times;
    for (std::size_t i = 0; i < a.size(); ++i) times.push_back(2 * a[i] + 3 * b[i] - 0.01 * c[i]);
    const std::vector<double> x = fit_non_negative({a, b, c}, times);
    CHECK(x[2] == 0.0);
    CHECK(x[0] == doctest::Approx(2).scale(0).epsilon(0.02));
    CHECK(x[1] == doctest::Approx(3).scale(0).epsilon(0.02));
}

TEST_CASE("the collective fit separates cached from streaming messages and the chip carries both") {
    // Two devices sharing a 16 MiB cache: each has 8 MiB; messages of 4 MiB and more spill.
    const double on_chip = 8.0 * 1024 * 1024, hop_s = 2e-6;
    const std::map<CollectiveKind, std::pair<double, double>> bandwidths = {  // streaming, cached
        {CollectiveKind::all_gather, {6e9, 30e9}},
        {CollectiveKind::reduce_scatter, {5e9, 15e9}},
        {CollectiveKind::all_reduce, {4e9, 16e9}}};
    Measurements m;
    m.provenance.devices = 2;
    m.provenance.cache_bytes = 2 * on_chip;
    m.provenance.backend = "cpu";
    m.provenance.memory_bytes = 1e9;
    for (const auto& [kind, bw] : bandwidths)
        for (double bytes = 64 * 1024; bytes <= 64 * 1024 * 1024; bytes *= 2) {
            const CollectiveTerms terms = collective_terms(kind, bytes, 2);
            const double spilled = std::max(0.0, 1.0 - on_chip / (2 * bytes));  // worked here, not by the program
            const double time_s = terms.latency_units * hop_s + terms.link_bytes * (spilled / bw.first + (1 - spilled) / bw.second);
            m.collectives.push_back({kind, 2, bytes, time_s});
        }
    for (const double bytes : {64e6, 128e6}) m.copies.push_back({bytes, 2 * bytes / 20e9});
    for (const std::int64_t n : {64, 256, 1024}) m.gemms.push_back({n, n, n, 2.0 * n * n * n / 50e9});
    const CalibrationFit fit = fit_measurements(m, "synthetic");
    REQUIRE(fit.collectives.size() == 3);
    for (const CollectiveFit& c : fit.collectives) {
        CAPTURE(collective_name(c.kind));
        CHECK(1.0 / c.streaming_s_per_byte == doctest::Approx(bandwidths.at(c.kind).first).scale(0).epsilon(1e-6));
        CHECK(1.0 / c.cached_s_per_byte == doctest::Approx(bandwidths.at(c.kind).second).scale(0).epsilon(1e-6));
        CHECK(c.latency_s == doctest::Approx(hop_s).scale(0).epsilon(1e-6));
    }
    // The link is the fastest streaming kind; each kind is a fraction of it.
    CHECK(1.0 / fit.link.s_per_byte == doctest::Approx(6e9).scale(0).epsilon(1e-6));
    CHECK(fit.link.residuals.max < 1e-6);
    const ChipSpec chip = fitted_chip(fit, m.provenance, "fitted");
    CHECK(chip.on_chip_memory_bytes == on_chip);
    const auto all_reduce = static_cast<std::size_t>(CollectiveKind::all_reduce);
    CHECK(chip.efficiency.collective_streaming[all_reduce] == doctest::Approx(4.0 / 6.0).scale(0).epsilon(1e-6));
    CHECK(chip.efficiency.collective_cached[all_reduce] == doctest::Approx(16.0 / 6.0).scale(0).epsilon(1e-6));
    // Written as a chip file and read back as every command reads it, the description keeps them.
    m.provenance.host = "test-host";
    const auto path = test::scratch_dir("calib") / "fitted.json";
    std::ofstream(path) << report::fitted_chip_json(chip, fit, m.provenance, "synthetic");
    const ChipSpec loaded = load_chip_file(path);
    CHECK(loaded.on_chip_memory_bytes == on_chip);
    CHECK(loaded.efficiency.matmul_output_passes == chip.efficiency.matmul_output_passes);
    for (std::size_t k = 0; k < loaded.efficiency.collective_streaming.size(); ++k) {
        CHECK(loaded.efficiency.collective_streaming[k] == doctest::Approx(chip.efficiency.collective_streaming[k]));
        CHECK(loaded.efficiency.collective_cached[k] == doctest::Approx(chip.efficiency.collective_cached[k]));
    }
    // The engine's bytes on the link for a 16 MiB AllReduce: 3/4 of it spills (8 MiB of cache for 32 MiB).
    const double bytes = 16.0 * 1024 * 1024;
    CHECK(collective_link_bytes(chip, CollectiveKind::all_reduce, bytes) ==
          doctest::Approx(bytes * (0.75 * 6.0 / 4.0 + 0.25 * 6.0 / 16.0)).scale(0).epsilon(1e-6));
}

TEST_CASE("a fitted chip predicts a sharded matmul as the hand-written engine formulas do") {
    ChipSpec chip;
    chip.name = "test";
    chip.peak_flops_per_s[index_of(Dtype::fp32)] = 50e9;
    chip.hbm_bw_Bps = 1e12;  // GEMMs stay compute-bound
    chip.efficiency.matmul_half_dim = 16;
    chip.efficiency.kernel_overhead_s = 1e-6;
    chip.nvlink = NvlinkSpec{1, 4e9, 5e-6};
    // X[8, 1536] sharded by rows . W[1536, 1536] sharded by columns, two devices: AllGather W, then
    // a [4, 1536] x [1536, 1536] GEMM.
    const ShardedCase c{ShardedKind::gather_weights, 8, 1536, 1536, 0, 2};
    const auto tile = [](double x) { return x / (x + 16.0); };
    const double compute_s = 2.0 * 4 * 1536 * 1536 / (50e9 * tile(4) * tile(1536) * tile(1536)) + 1e-6;
    const double gather_bytes = 1536.0 * 1536 * 4;
    const double comm_s = 0.5 * gather_bytes / 4e9 + 1 * 5e-6;  // (k-1)/k of the array, one step of latency
    const CaseTime time = predict_case(chip, c);
    CHECK(time.compute_s == doctest::Approx(compute_s).scale(0).epsilon(1e-9));
    CHECK(time.communication_s == doctest::Approx(comm_s).scale(0).epsilon(1e-9));
    // The MLP block: AllGather in, two GEMMs, ReduceScatter out.
    const CaseWork mlp = case_work({ShardedKind::tp_mlp, 64, 256, 0, 1024, 4});
    REQUIRE(mlp.gemms.size() == 2);
    CHECK(mlp.gemms[0].n == 256);  // f / 4
    REQUIRE(mlp.collectives.size() == 2);
    CHECK(mlp.collectives[0].kind == CollectiveKind::all_gather);
    CHECK(mlp.collectives[1].kind == CollectiveKind::reduce_scatter);
    CHECK(mlp.collectives[1].bytes == 64.0 * 256 * 4);
    CHECK_THROWS_AS((void)case_work({ShardedKind::local, 7, 8, 8, 0, 2}), InputError);

    // A memory-bound GEMM writing its output three times, and a gather half of whose working set
    // (twice the 9 MiB weights) stays in an 8 MiB cache streaming at half the link and cached at twice it.
    chip.hbm_bw_Bps = 1e9;
    chip.efficiency.matmul_output_passes = 3;
    chip.on_chip_memory_bytes = 8.0 * 1024 * 1024;
    const auto gather = static_cast<std::size_t>(CollectiveKind::all_gather);
    chip.efficiency.collective_streaming[gather] = 0.5;
    chip.efficiency.collective_cached[gather] = 2.0;
    const double memory_s = 4.0 * (4 * 1536 + 1536 * 1536 + 3 * 4 * 1536) / 1e9 + 1e-6;
    const double spilled = 1.0 - 8.0 * 1024 * 1024 / (2 * gather_bytes);
    const double link_bytes = gather_bytes * (spilled / 0.5 + (1 - spilled) / 2.0);
    const CaseTime slow = predict_case(chip, c);
    CHECK(slow.compute_s == doctest::Approx(memory_s).scale(0).epsilon(1e-9));
    CHECK(slow.communication_s == doctest::Approx(0.5 * link_bytes / 4e9 + 5e-6).scale(0).epsilon(1e-9));
}

TEST_CASE("measurements survive a write and a read, and malformed files name the field") {
    Measurements m;
    m.provenance = {"host", "cpu", 2, 1e9, 1e6, "Eigen", "2026-01-01T00:00:00Z", "cpu", 2};
    m.gemms = {{64, 64, 64, 1e-5}, {128, 128, 128, 8e-5}};
    m.copies = {{1e6, 1e-4}};
    m.collectives = {{CollectiveKind::all_reduce, 2, 65536, 2e-5}};
    m.sharded = {{{ShardedKind::tp_mlp, 64, 128, 128, 256, 2}, 3e-4}};
    const auto dir = test::scratch_dir("calib");
    const auto path = dir / "m.json";
    io::write_file_atomically(path, measurements_json(m));
    const Measurements back = load_measurements(path);
    CHECK(back.gemms.size() == 2);
    CHECK(back.gemms[1].time_s == 8e-5);
    CHECK(back.collectives[0].kind == CollectiveKind::all_reduce);
    CHECK(back.sharded[0].shape.f == 256);
    CHECK(back.provenance.devices == 2);

    std::string text = measurements_json(m);
    const auto bad = [&](const std::string& from, const std::string& to, const std::string& field) {
        std::string broken = text;
        const auto at = broken.find(from);
        REQUIRE(at != std::string::npos);
        broken.replace(at, from.size(), to);
        std::ofstream(dir / "bad.json") << broken;
        try {
            (void)load_measurements(dir / "bad.json");
            FAIL("accepted " << to);
        } catch (const InputError& e) {
            CHECK(std::string(e.what()).find(field) != std::string::npos);
            CHECK(std::string(e.what()).find("bad.json") != std::string::npos);
        }
    };
    bad("\"time_s\": 1e-05", "\"time_s\": -1e-05", "gemms[0].time_s");
    bad("\"bytes\": 65536.0", "\"bytes\": 0", "collectives[0].bytes");
    bad("\"kind\": \"allreduce\"", "\"kind\": \"allsum\"", "collectives[0].kind");
    bad("\"cores\": 2,", "", "provenance.cores");
    std::filesystem::remove_all(dir);
}

TEST_CASE("in-place all-gather and reduce-scatter (shard inside the full buffer) give the same blocks") {
    const int devices = 2;
    const std::size_t count = 6;
    std::vector<std::vector<float>> gathered(devices), reduced(devices);
    on_threads(devices, [&](Comm& comm) {
        const int r = comm.rank();
        std::vector<float> all(count * devices, -1.0f), data(count * devices);
        for (std::size_t i = 0; i < count; ++i) all[static_cast<std::size_t>(r) * count + i] = static_cast<float>(r * 10 + static_cast<int>(i));
        comm.all_gather(all.data() + static_cast<std::size_t>(r) * count, all.data(), count);
        for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(r, i);
        float* mine = data.data() + static_cast<std::size_t>(r) * count;
        comm.reduce_scatter(data.data(), mine, count);
        gathered[r] = all;
        reduced[r] = std::vector<float>(mine, mine + count);
    });
    for (int r = 0; r < devices; ++r)
        for (std::size_t i = 0; i < count; ++i) {
            for (int j = 0; j < devices; ++j)
                CHECK(gathered[r][static_cast<std::size_t>(j) * count + i] == static_cast<float>(j * 10 + static_cast<int>(i)));
            const std::size_t at = static_cast<std::size_t>(r) * count + i;
            CHECK(reduced[r][i] == value(0, at) + value(1, at));
        }
}

TEST_CASE("files are replaced only by complete, checked ones, temporary files follow no planted link") {
    const auto dir = test::scratch_dir("safe_write");
    // A command of its own: files read by earlier tests, since deleted, may share the new file's inode.
    io::forget_inputs();
    const auto path = dir / "result.json";
    io::write_file_atomically(path, "{\"good\": 1}\n");
    // A check that refuses the new text leaves the old file as it was and no temporary behind.
    CHECK_THROWS_AS(io::write_file_atomically(path, "{\"good\": null}\n", [](const std::filesystem::path&) {
                        throw InputError("check", "good", "not finite");
                    }),
                    InputError);
    CHECK(test::read_json(path)["good"] == 1);
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file() ? 1 : 0;
    CHECK(files == 1);
    // A link planted where an old-style temporary name would be is left alone: its target is untouched.
    const auto victim = dir / "victim.txt";
    std::ofstream(victim) << "precious";
    std::filesystem::create_symlink(victim, dir / ("result.json.tmp-" + std::to_string(::getpid())));
    io::write_file_atomically(path, "{\"good\": 2}\n");
    std::ifstream in(victim);
    std::string kept;
    in >> kept;
    CHECK(kept == "precious");
    CHECK(test::read_json(path)["good"] == 2);
    // A folder that cannot be written to: the real cause, not "Success".
    try {
        io::write_file_atomically(dir / "no-such-folder" / "x.json", "{}");
        FAIL("wrote into a missing folder");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("No such file or directory") != std::string::npos);
    }
}
