#pragma once
// One device's view of its group during a calibration run: its rank, and the collectives it
// takes part in. The CPU backend implements it with shared-memory rings between threads, the
// MPI backend with MPI calls; the device programs (device_programs.hpp) are written once over it.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace ridgeline::calibration {

// A collective that waited longer than its timeout, or a group broken by another device's failure.
class CollectiveTimeout : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Comm {
public:
    virtual ~Comm() = default;
    [[nodiscard]] virtual int rank() const = 0;
    [[nodiscard]] virtual int size() const = 0;
    virtual void barrier() = 0;
    // The largest of every device's `value` (the slowest device sets a step's time).
    [[nodiscard]] virtual double max(double value) = 0;
    // `count` floats from every device, concatenated in rank order into `out` (count x size). In
    // place when `in` is this device's block of `out`.
    virtual void all_gather(const float* in, float* out, std::size_t count) = 0;
    // Sums `data` (count x size floats, destroyed: used as workspace) over the group; this
    // device's block of `count` sums goes to `out` (which may be that block of `data`).
    virtual void reduce_scatter(float* data, float* out, std::size_t count) = 0;
    // Sums `data` (count floats) over the group, in place.
    virtual void all_reduce(float* data, std::size_t count) = 0;
    // Block j (count floats) of `in` goes to device j, landing at block rank() of its `out`.
    virtual void all_to_all(const float* in, float* out, std::size_t count) = 0;
    // Sends `count` floats to the next rank and receives as many from the previous one (a ring shift).
    virtual void send_recv(const float* send, float* recv, std::size_t count) = 0;
};

// A device of one replica among several running the same case: collectives within its replica,
// barriers and the slowest time across all of them, so that the replicas start every repetition
// together, as the devices of a fitting step do.
class ReplicaComm final : public Comm {
public:
    ReplicaComm(Comm& replica, Comm& host) : replica_(replica), host_(host) {}
    [[nodiscard]] int rank() const override { return replica_.rank(); }
    [[nodiscard]] int size() const override { return replica_.size(); }
    void barrier() override { host_.barrier(); }
    [[nodiscard]] double max(double value) override { return host_.max(value); }
    void all_gather(const float* in, float* out, std::size_t count) override { replica_.all_gather(in, out, count); }
    void reduce_scatter(float* data, float* out, std::size_t count) override { replica_.reduce_scatter(data, out, count); }
    void all_reduce(float* data, std::size_t count) override { replica_.all_reduce(data, count); }
    void all_to_all(const float* in, float* out, std::size_t count) override { replica_.all_to_all(in, out, count); }
    void send_recv(const float* send, float* recv, std::size_t count) override { replica_.send_recv(send, recv, count); }

private:
    Comm& replica_;
    Comm& host_;
};

}  // namespace ridgeline::calibration
