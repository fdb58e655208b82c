// Drawing an index of a row of 8,252 weights by inversion, many times or
// once, without a serial running sum: the row's sums in blocks of 64 entries
// (eight lanes each), then per draw a binary search over the blocks' running
// totals and a walk within the one block the draw falls in. A cumulative
// array of every entry was a chain of 8,252 dependent double adds (~8 us) and
// a 66 KB array per row; the blocks' totals take 1 KB. Shared by
// acceptor.pcg (thinning proposals) and acceptor.tolerance (tau draws per
// node, each compared with the children's spans of the running total rather
// than inverted). Header-only: each plugin stays one self-contained library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cadenza::acceptors {

// Entries that are not > 0 count as 0. The row must outlive the object.
class BlockedRow {
public:
    static constexpr int64_t block = 64;

    BlockedRow() = default;
    BlockedRow(const float* row, int64_t count) { assign(row, count); }

    // Reuses the blocks' storage (no allocation once it has seen a row this long).
    void assign(const float* row, int64_t count) {
        row_ = row;
        count_ = count;
        ends_.resize(static_cast<size_t>((count + block - 1) / block));
        double running = 0.0;
        for (size_t b = 0; b < ends_.size(); ++b) {
            const int64_t first = static_cast<int64_t>(b) * block, last = std::min(count, first + block);
            double lane[8] = {};
            int64_t t = first;
            for (; t + 8 <= last; t += 8)
                for (int j = 0; j < 8; ++j) lane[j] += positive(row[t + j]);
            for (; t < last; ++t) lane[0] += positive(row[t]);
            running += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
            ends_[b] = running;
        }
    }

    double total() const { return ends_.empty() ? 0.0 : ends_.back(); }
    const float* row() const { return row_; }

    // The first entry at which the running total exceeds `target` (in [0,
    // total)); the last positive entry when rounding leaves none.
    uint32_t invert(double target) const {
        size_t b = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), target) - ends_.begin());
        int64_t last_positive = -1;
        for (; b < ends_.size(); ++b) {
            double running = b > 0 ? ends_[b - 1] : 0.0;
            const int64_t first = static_cast<int64_t>(b) * block, last = std::min(count_, first + block);
            for (int64_t t = first; t < last; ++t) {
                if (!(row_[t] > 0.0f)) continue;
                running += row_[t];
                last_positive = t;
                if (target < running) return static_cast<uint32_t>(t);
            }
        }
        if (last_positive < 0)
            for (int64_t t = count_ - 1; t >= 0; --t)
                if (row_[t] > 0.0f) return static_cast<uint32_t>(t);
        return static_cast<uint32_t>(std::max<int64_t>(last_positive, 0));
    }

    // The targets that invert to one entry: [lo, hi) of the running total,
    // summed as invert() sums it (lo == hi for an entry that is not > 0).
    struct Span {
        uint32_t entry;
        double lo, hi;
    };

    Span span_of(uint32_t entry) const {
        const int64_t b = static_cast<int64_t>(entry) / block;
        double running = b > 0 ? ends_[static_cast<size_t>(b - 1)] : 0.0;
        for (int64_t t = b * block; t < static_cast<int64_t>(entry); ++t)
            if (row_[t] > 0.0f) running += row_[t];
        const double hi = row_[entry] > 0.0f ? running + row_[entry] : running;
        return Span{entry, running, hi};
    }

    // invert(target) == span.entry, in O(1) away from the span's ends. Within
    // `margin` of an end, where the blocks' totals and the walk's running
    // sum may round apart (~1e-12 of the total over 8,252 entries), it
    // inverts: the answer is invert()'s, bit for bit, either way.
    bool inverts_to(const Span& span, double target) const {
        const double margin = total() * 1e-9;
        if (target >= span.lo + margin && target < span.hi - margin) return true;
        if (target < span.lo - margin || target >= span.hi + margin) return false;
        return invert(target) == span.entry;
    }

private:
    static double positive(float value) { return value > 0.0f ? static_cast<double>(value) : 0.0; }

    const float* row_ = nullptr;
    int64_t count_ = 0;
    std::vector<double> ends_;  // the running total at each block's end
};

}  // namespace cadenza::acceptors
