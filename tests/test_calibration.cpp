// Calibration parts checked against values computed here: ring collectives against sums and
// copies worked in the test, fits against the parameters that generated synthetic measurements,
// predictions against the cost formulas written out by hand.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <unistd.h>

#include "calibration/fit.hpp"
#include "calibration/holdout.hpp"
#include "calibration/measurements.hpp"
#include "calibration/shm_comm.hpp"
#include "core/error.hpp"
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
    CHECK(fit.latency_s == doctest::Approx(alpha_s).epsilon(0.03));
    CHECK(1.0 / fit.s_per_byte == doctest::Approx(bandwidth_Bps).epsilon(0.03));
    CHECK(fit.residuals.max < 0.02);
    CHECK(fit.residuals.samples == static_cast<int>(times.size()));
    // Too few samples is the caller's error, not a NaN.
    CHECK_THROWS_AS((void)fit_latency_bandwidth({1.0}, {1.0}, {1.0}, "one"), InputError);
}

TEST_CASE("the GEMM fit recovers peak, tile half-dimension and overhead from synthetic GEMMs") {
    const double peak = 60e9, half_dim = 32, overhead_s = 3e-6;
    std::vector<GemmSample> gemms;
    for (const std::int64_t m : {8, 64, 256, 1024})
        for (const std::int64_t k : {16, 128, 1024})
            for (const std::int64_t n : {32, 512}) {
                const auto tile = [&](std::int64_t x) { return static_cast<double>(x) / (static_cast<double>(x) + half_dim); };
                const double flops = 2.0 * static_cast<double>(m * k * n);
                gemms.push_back({m, k, n, overhead_s + flops / (peak * tile(m) * tile(k) * tile(n))});
            }
    const GemmFit fit = fit_gemms(gemms);
    CHECK(fit.peak_flops_per_s == doctest::Approx(peak).epsilon(0.05));
    CHECK(fit.half_dim == doctest::Approx(half_dim).epsilon(0.05));  // the grid steps by 2^0.1 (7%)
    CHECK(fit.residuals.rms < 0.05);
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
    CHECK(time.compute_s == doctest::Approx(compute_s).epsilon(1e-9));
    CHECK(time.communication_s == doctest::Approx(comm_s).epsilon(1e-9));
    // The MLP block: AllGather in, two GEMMs, ReduceScatter out.
    const CaseWork mlp = case_work({ShardedKind::tp_mlp, 64, 256, 0, 1024, 4});
    REQUIRE(mlp.gemms.size() == 2);
    CHECK(mlp.gemms[0].n == 256);  // f / 4
    REQUIRE(mlp.collectives.size() == 2);
    CHECK(mlp.collectives[0].kind == CollectiveKind::all_gather);
    CHECK(mlp.collectives[1].kind == CollectiveKind::reduce_scatter);
    CHECK(mlp.collectives[1].bytes == 64.0 * 256 * 4);
    CHECK_THROWS_AS((void)case_work({ShardedKind::local, 7, 8, 8, 0, 2}), InputError);
}

TEST_CASE("measurements survive a write and a read, and malformed files name the field") {
    Measurements m;
    m.provenance = {"host", "cpu", 2, 1e9, 1e6, "Eigen", "2026-01-01T00:00:00Z", "cpu", 2};
    m.gemms = {{64, 64, 64, 1e-5}, {128, 128, 128, 8e-5}};
    m.copies = {{1e6, 1e-4}};
    m.collectives = {{CollectiveKind::all_reduce, 2, 65536, 2e-5}};
    m.sharded = {{{ShardedKind::tp_mlp, 64, 128, 128, 256, 2}, 3e-4}};
    const auto dir = std::filesystem::temp_directory_path() / ("ridgeline_calib_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto path = dir / "m.json";
    write_file_atomically(path, measurements_json(m));
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
