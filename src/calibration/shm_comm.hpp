#pragma once
// Collectives between threads of one process through shared memory, as real ring algorithms:
// reduce-scatter and all-gather rings (an all-reduce is one then the other), each step closed by a
// barrier. Every wait has a timeout, and a device that fails breaks the group so that the others
// stop instead of waiting for it: nothing hangs.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "calibration/comm.hpp"

namespace ridgeline::calibration {

// State shared by the devices of one group.
class ShmGroup {
public:
    ShmGroup(int devices, std::chrono::milliseconds timeout);
    [[nodiscard]] int size() const { return devices_; }
    // Waits until every device has arrived; CollectiveTimeout after the timeout or once broken.
    void arrive_and_wait();
    // Wakes every waiter with CollectiveTimeout (a device failed).
    void break_group();
    // Pointers each device publishes for the current collective.
    std::vector<const float*> sources;
    std::vector<float*> targets;
    std::vector<double> values;

private:
    int devices_;
    std::chrono::milliseconds timeout_;
    std::mutex mutex_;
    std::condition_variable woken_;
    int arrived_ = 0;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<bool> broken_{false};
};

class ShmComm final : public Comm {
public:
    ShmComm(ShmGroup& group, int rank) : group_(group), rank_(rank) {}
    [[nodiscard]] int rank() const override { return rank_; }
    [[nodiscard]] int size() const override { return group_.size(); }
    void barrier() override { group_.arrive_and_wait(); }
    [[nodiscard]] double max(double value) override;
    void all_gather(const float* in, float* out, std::size_t count) override;
    void reduce_scatter(float* data, float* out, std::size_t count) override;
    void all_reduce(float* data, std::size_t count) override;
    void all_to_all(const float* in, float* out, std::size_t count) override;
    void send_recv(const float* send, float* recv, std::size_t count) override;

private:
    // The ring passes over `data` (total floats, split into size() near-equal chunks), in place.
    void ring_reduce_scatter(float* data, std::size_t total);
    void ring_all_gather(float* data, std::size_t total);
    [[nodiscard]] int left() const { return (rank_ + size() - 1) % size(); }
    ShmGroup& group_;
    int rank_;
};

}  // namespace ridgeline::calibration
