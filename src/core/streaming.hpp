#pragma once
// What every search keeps while candidates stream by, without holding the space: the K best, and
// the Pareto front of two objectives. Candidates are ranked by a Rank (smaller first, ties to the
// earlier candidate), so that partial results of several threads merge to the same answer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace ridgeline {

struct Rank {
    double first = 0, second = 0, third = 0;  // compared in this order, smaller first
    std::uint64_t ordinal = 0;                // position in the enumeration
    [[nodiscard]] bool operator<(const Rank& o) const {
        return std::tie(first, second, third, ordinal) < std::tie(o.first, o.second, o.third, o.ordinal);
    }
};

// The K best; T has `Rank rank() const`.
template <class T>
class TopK {
public:
    explicit TopK(std::size_t capacity) : capacity_(capacity) { items_.reserve(capacity + 1); }
    [[nodiscard]] bool admits(const Rank& rank) const { return items_.size() < capacity_ || rank < items_.back().rank(); }
    void insert(const T& item) {  // only what admits() let in
        const Rank rank = item.rank();
        items_.insert(std::find_if(items_.begin(), items_.end(), [&](const T& x) { return rank < x.rank(); }), item);
        if (items_.size() > capacity_) items_.pop_back();
    }
    [[nodiscard]] const std::vector<T>& items() const { return items_; }
    [[nodiscard]] std::vector<T>& items() { return items_; }

private:
    std::size_t capacity_;
    std::vector<T> items_;  // best first
};

// The candidates no other beats on both objectives, both minimised: T has `double x() const`,
// `double y() const` and `Rank rank() const` (equal points: the smaller rank stays).
template <class T>
class ParetoFront {
public:
    [[nodiscard]] bool admits(double x, double y, const Rank& rank) const {
        // The candidate with the smallest y at or below this x is the last one at or below it.
        const auto above = std::upper_bound(items_.begin(), items_.end(), x, [](double v, const T& p) { return v < p.x(); });
        if (above == items_.begin()) return true;
        const T& q = *(above - 1);
        if (q.y() < y) return false;
        if (q.y() > y) return true;
        return q.x() == x && rank < q.rank();
    }
    void insert(const T& item) {  // only what admits() let in
        // Drop what the new candidate dominates: at least its x and at least its y.
        auto first = std::lower_bound(items_.begin(), items_.end(), item.x(), [](const T& p, double v) { return p.x() < v; });
        auto last = first;
        while (last != items_.end() && last->y() >= item.y()) ++last;
        items_.insert(items_.erase(first, last), item);
    }
    [[nodiscard]] const std::vector<T>& items() const { return items_; }

private:
    std::vector<T> items_;  // x ascending, y descending
};

}  // namespace ridgeline
