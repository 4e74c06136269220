#include "calibration/shm_comm.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ridgeline::calibration {

namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}

// Chunk i of `total` floats split `parts` ways: [offset(i), offset(i + 1)).
std::size_t offset(std::size_t total, int parts, int i) {
    return total * static_cast<std::size_t>(i) / static_cast<std::size_t>(parts);
}

}  // namespace

ShmGroup::ShmGroup(int devices, std::chrono::milliseconds timeout)
    : sources(static_cast<std::size_t>(devices), nullptr),
      targets(static_cast<std::size_t>(devices), nullptr),
      values(static_cast<std::size_t>(devices), 0.0),
      devices_(devices),
      timeout_(timeout) {}

void ShmGroup::break_group() {
    const std::lock_guard lock(mutex_);
    broken_ = true;
    woken_.notify_all();
}

void ShmGroup::arrive_and_wait() {
    if (broken_) throw CollectiveTimeout("collective abandoned: another device of the group failed");
    std::unique_lock lock(mutex_);
    const std::uint64_t generation = generation_;
    if (++arrived_ == devices_) {
        arrived_ = 0;
        ++generation_;
        woken_.notify_all();
        return;
    }
    lock.unlock();
    // A short spin first: steps of a ring are microseconds apart, a sleep and wake-up costs tens.
    for (int i = 0; i < 4000; ++i) {
        if (generation_ != generation) return;
        cpu_relax();
    }
    lock.lock();
    const bool woke = woken_.wait_for(lock, timeout_, [&] { return generation_ != generation || broken_; });
    if (!woke) {
        broken_ = true;
        woken_.notify_all();
        throw CollectiveTimeout("collective timed out after " + std::to_string(timeout_.count()) +
                                " ms waiting for the other devices");
    }
    if (generation_ == generation) throw CollectiveTimeout("collective abandoned: another device of the group failed");
}

double ShmComm::max(double value) {
    group_.values[rank_] = value;
    barrier();
    const double largest = *std::max_element(group_.values.begin(), group_.values.end());
    barrier();  // nobody overwrites a value before every device has read them all
    return largest;
}

void ShmComm::ring_reduce_scatter(float* data, std::size_t total) {
    const int n = size();
    // Step s: add the left neighbour's partial sum of chunk (rank - s - 2) into ours; after n - 1
    // steps chunk `rank` holds the sum over every device. Within a step each device writes one
    // chunk and reads a different one, so the barrier between steps is the only synchronisation.
    const float* from = group_.targets[left()];
    for (int s = 0; s + 1 < n; ++s) {
        const int c = ((rank_ - s - 2) % n + 2 * n) % n;
        const std::size_t begin = offset(total, n, c), end = offset(total, n, c + 1);
        for (std::size_t i = begin; i < end; ++i) data[i] += from[i];
        barrier();
    }
}

void ShmComm::ring_all_gather(float* data, std::size_t total) {
    const int n = size();
    // Step s: copy chunk (rank - s - 1), which the left neighbour completed one step earlier.
    const float* from = group_.targets[left()];
    for (int s = 0; s + 1 < n; ++s) {
        const int c = ((rank_ - s - 1) % n + n) % n;
        const std::size_t begin = offset(total, n, c), end = offset(total, n, c + 1);
        std::memcpy(data + begin, from + begin, (end - begin) * sizeof(float));
        barrier();
    }
}

void ShmComm::all_gather(const float* in, float* out, std::size_t count) {
    float* mine = out + static_cast<std::size_t>(rank_) * count;
    if (mine != in) std::memcpy(mine, in, count * sizeof(float));  // in place: the shard is already there
    group_.targets[rank_] = out;
    barrier();
    ring_all_gather(out, count * static_cast<std::size_t>(size()));
}

void ShmComm::reduce_scatter(float* data, float* out, std::size_t count) {
    group_.targets[rank_] = data;
    barrier();
    ring_reduce_scatter(data, count * static_cast<std::size_t>(size()));
    const float* mine = data + static_cast<std::size_t>(rank_) * count;
    if (mine != out) std::memmove(out, mine, count * sizeof(float));
}

void ShmComm::all_reduce(float* data, std::size_t count) {
    group_.targets[rank_] = data;
    barrier();
    ring_reduce_scatter(data, count);
    ring_all_gather(data, count);
}

void ShmComm::all_to_all(const float* in, float* out, std::size_t count) {
    group_.sources[rank_] = in;
    barrier();
    for (int j = 0; j < size(); ++j)
        std::memcpy(out + static_cast<std::size_t>(j) * count,
                    group_.sources[j] + static_cast<std::size_t>(rank_) * count, count * sizeof(float));
    barrier();
}

void ShmComm::send_recv(const float* send, float* recv, std::size_t count) {
    group_.sources[rank_] = send;
    barrier();
    std::memcpy(recv, group_.sources[left()], count * sizeof(float));
    barrier();
}

}  // namespace ridgeline::calibration
