#pragma once
// Synchronous training waits for its slowest rank. With each rank's step time varying around the
// mean by a coefficient of variation cv (independent, normal), N ranks take on average
// mean x (1 + cv x E[max of N standard normals]) a step: the wait grows with the rank count
// (about sqrt(2 ln N) standard deviations).
namespace ridgeline {

// E[max of n independent standard normals], by integrating n x phi(x) x Phi(x)^(n-1); 0 for n <= 1.
[[nodiscard]] double expected_max_standard_normal(double n);

// The step's extra share spent waiting for the slowest of `ranks`: cv x E[max of ranks].
[[nodiscard]] double straggler_fraction(double ranks, double rank_time_cv);

// A step whose other parts take `base_s`, with the stack's once-per-step cost, waiting for the
// slowest rank: the wait is a share of everything else, as step_model.cpp composes a step (a test
// holds the two together).
[[nodiscard]] inline double step_with_overheads(double base_s, double step_overhead_s, double straggler_fraction) {
    return (base_s + step_overhead_s) * (1.0 + straggler_fraction);
}

}  // namespace ridgeline
