#include "calibration/device_programs.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "calibration/kernels.hpp"

namespace ridgeline::calibration {

namespace {

using Buffer = std::vector<float>;

std::size_t count_of(double value) { return static_cast<std::size_t>(std::max(1.0, value)); }

// Small non-zero values: the arithmetic never meets denormals or overflow over the repetitions.
Buffer filled(std::size_t count) {
    Buffer buffer(count);
    for (std::size_t i = 0; i < count; ++i) buffer[i] = 0.25f + 0.125f * static_cast<float>(i % 5);
    return buffer;
}

// Reading a buffer larger than the cache pushes out what a step left there; reading only, so
// that no dirty line is written back during the next timing.
std::uint32_t evict_caches(const std::vector<std::uint32_t>& buffer) {
    std::uint32_t sum = 0;
    for (const std::uint32_t x : buffer) sum += x;
    return sum;
}

volatile std::uint32_t sink = 0;  // keeps the eviction's reads

template <class Body>
double timed(Comm& comm, const Repeat& repeat, Body&& body) {
    const std::vector<std::uint32_t> evict(static_cast<std::size_t>(repeat.evict_bytes / sizeof(std::uint32_t)), 1U);
    body();  // warm-up: first touch of every page, and instruction caches
    double best = std::numeric_limits<double>::infinity();
    double spent = 0;
    for (int rep = 1;; ++rep) {
        const auto begin = std::chrono::steady_clock::now();
        sink = evict_caches(evict);
        comm.barrier();
        const auto start = std::chrono::steady_clock::now();
        body();
        const auto end = std::chrono::steady_clock::now();
        const double group = comm.max(std::chrono::duration<double>(end - start).count());  // the same value on every device
        best = std::min(best, group);
        spent += comm.max(std::chrono::duration<double>(end - begin).count());  // evictions included: they bound the run too
        if (rep >= repeat.min_reps && (spent >= repeat.target_s || rep >= repeat.max_reps)) break;
    }
    return best;
}

// Loads and ordinary stores, as elementwise kernels and GEMM outputs move memory: memcpy picks
// non-temporal stores above sizes of its own choosing, and its speed jumps there.
void scaled_copy(float* __restrict to, const float* __restrict from, std::size_t count, float factor) {
    for (std::size_t i = 0; i < count; ++i) to[i] = factor * from[i];
}

volatile float one = 1.0f;  // read at run time: the compiler cannot fold the product into a memcpy

}  // namespace

double gemm_program(Comm& comm, std::int64_t m, std::int64_t k, std::int64_t n, const Repeat& repeat) {
    const auto um = static_cast<std::size_t>(m), uk = static_cast<std::size_t>(k), un = static_cast<std::size_t>(n);
    const Buffer a = filled(um * uk), b = filled(uk * un);
    Buffer c(um * un);
    return timed(comm, repeat, [&] { matmul(a.data(), Layout::col_major, b.data(), Layout::col_major, c.data(), m, k, n); });
}

double copy_program(Comm& comm, double bytes, const Repeat& repeat) {
    const std::size_t count = count_of(bytes / sizeof(float));
    const Buffer from = filled(count);
    Buffer to(count);
    const float factor = one;
    return timed(comm, repeat, [&] { scaled_copy(to.data(), from.data(), count, factor); });
}

double collective_program(Comm& comm, CollectiveKind kind, double bytes, const Repeat& repeat) {
    const auto p = static_cast<std::size_t>(comm.size());
    const std::size_t total = count_of(bytes / sizeof(float) / static_cast<double>(p * p)) * p * p;  // divisible
    switch (kind) {
        case CollectiveKind::all_gather: {
            // In place, as frameworks gather into the full buffer: this device's shard is already in it.
            Buffer out = filled(total);
            const float* in = out.data() + static_cast<std::size_t>(comm.rank()) * (total / p);
            return timed(comm, repeat, [&] { comm.all_gather(in, out.data(), total / p); });
        }
        case CollectiveKind::reduce_scatter: {
            Buffer data = filled(total);
            float* out = data.data() + static_cast<std::size_t>(comm.rank()) * (total / p);
            return timed(comm, repeat, [&] { comm.reduce_scatter(data.data(), out, total / p); });
        }
        case CollectiveKind::all_reduce: {
            Buffer data = filled(total);
            return timed(comm, repeat, [&] { comm.all_reduce(data.data(), total); });
        }
        case CollectiveKind::all_to_all: {
            // `bytes` is the whole array over the group: each device holds total / p of it.
            const Buffer in = filled(total / p);
            Buffer out(total / p);
            return timed(comm, repeat, [&] { comm.all_to_all(in.data(), out.data(), total / (p * p)); });
        }
        case CollectiveKind::permute:
        case CollectiveKind::broadcast: {
            const std::size_t count = count_of(bytes / sizeof(float));
            const Buffer send = filled(count);
            Buffer recv(count);
            return timed(comm, repeat, [&] { comm.send_recv(send.data(), recv.data(), count); });
        }
    }
    return 0;
}

double sharded_program(Comm& comm, const ShardedCase& c, const Repeat& repeat) {
    const std::int64_t p = comm.size();
    const bool shared = p > 1;
    const auto u = [](std::int64_t value) { return static_cast<std::size_t>(value); };
    const std::int64_t m = c.m, k = c.k, n = c.n;
    switch (c.kind) {
        case ShardedKind::local: {
            const Buffer x = filled(u(m / p * k)), w = filled(u(k * n));
            Buffer y(u(m / p * n));
            return timed(comm, repeat, [&] { matmul(x.data(), Layout::row_major, w.data(), Layout::col_major, y.data(), m / p, k, n); });
        }
        case ShardedKind::gather_contraction: {
            // Column blocks of a column-major X are contiguous: gathering them rebuilds X[m, k].
            const Buffer w = filled(u(k * n));
            Buffer x = filled(u(m * k)), y(u(m * n));
            const float* shard = x.data() + u(comm.rank()) * u(m * (k / p));  // gathered in place
            return timed(comm, repeat, [&] {
                if (shared) comm.all_gather(shard, x.data(), u(m * (k / p)));
                matmul(x.data(), Layout::col_major, w.data(), Layout::col_major, y.data(), m, k, n);
            });
        }
        case ShardedKind::reduce_scatter_partial:
        case ShardedKind::all_reduce_partial: {
            const Buffer x = filled(u(m * (k / p))), w = filled(u((k / p) * n));
            Buffer y(u(m * n));
            float* out = y.data() + u(comm.rank()) * u(m / p * n);  // this device's rows, in place
            const bool reduce_scatter = c.kind == ShardedKind::reduce_scatter_partial;
            return timed(comm, repeat, [&] {
                matmul(x.data(), Layout::col_major, w.data(), Layout::row_major, y.data(), m, k / p, n);
                if (!shared) return;
                if (reduce_scatter) comm.reduce_scatter(y.data(), out, u(m / p * n));
                else comm.all_reduce(y.data(), u(m * n));
            });
        }
        case ShardedKind::gather_weights: {
            const Buffer x = filled(u(m / p * k));
            Buffer w = filled(u(k * n)), y(u(m / p * n));
            const float* shard = w.data() + u(comm.rank()) * u(k * (n / p));
            return timed(comm, repeat, [&] {
                if (shared) comm.all_gather(shard, w.data(), u(k * (n / p)));
                matmul(x.data(), Layout::row_major, w.data(), Layout::col_major, y.data(), m / p, k, n);
            });
        }
        case ShardedKind::tp_mlp: {
            const std::int64_t f = c.f / p;
            const Buffer w1 = filled(u(k * f)), w2 = filled(u(f * k));
            Buffer x = filled(u(m * k)), h(u(m * f)), y(u(m * k));
            const float* shard = x.data() + u(comm.rank()) * u(m / p * k);  // row blocks of row-major X
            float* out = y.data() + u(comm.rank()) * u(m / p * k);
            return timed(comm, repeat, [&] {
                if (shared) comm.all_gather(shard, x.data(), u(m / p * k));
                matmul(x.data(), Layout::row_major, w1.data(), Layout::col_major, h.data(), m, k, f);
                matmul(h.data(), Layout::row_major, w2.data(), Layout::col_major, y.data(), m, f, k);
                if (shared) comm.reduce_scatter(y.data(), out, u(m / p * k));
            });
        }
    }
    return 0;
}

}  // namespace ridgeline::calibration
