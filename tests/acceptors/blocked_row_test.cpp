// BlockedRow (acceptors/common/blocked_row.h): a draw compared with an
// entry's span of the running total decides as inverting the row does, also
// at the span's ends and where rounding puts the blocks' totals and the walk
// apart.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/blocked_row.h"

namespace cadenza::test {
namespace {

using acceptors::BlockedRow;

// Half zeros (outside a nucleus), the rest spread over 2^-60..1, so that the
// double sums round and the blocks' eight-lane totals and the walk's running
// sum come apart by a few units in the last place.
std::vector<float> row_of(uint32_t seed, int64_t vocab) {
    std::mt19937 random(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(vocab), 0.0f);
    for (float& value : row)
        if (unit(random) >= 0.5f) value = std::ldexp(unit(random), -static_cast<int>(random() % 61));
    return row;
}

// The doubles within `steps` units in the last place of `x`, in [0, total).
std::vector<double> around(double x, int steps, double total) {
    std::vector<double> out;
    double below = x, above = x;
    for (int k = 0; k < steps; ++k) {
        below = std::nextafter(below, -1.0);
        above = std::nextafter(above, 2.0 * total);
        out.push_back(below);
        out.push_back(above);
    }
    out.push_back(x);
    std::vector<double> kept;
    for (double value : out)
        if (value >= 0.0 && value < total) kept.push_back(value);
    return kept;
}

TEST(BlockedRow, InvertsToTheEntryExactlyWhenTheDrawFallsInItsSpan) {
    const int64_t vocab = 8252;
    std::mt19937_64 random(17);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    int64_t checked = 0, at_ends = 0, named = 0;
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        const std::vector<float> row = row_of(seed, vocab);
        const BlockedRow blocks(row.data(), vocab);
        const double total = blocks.total();
        for (int i = 0; i < 40; ++i) {
            const auto entry = static_cast<uint32_t>(random() % static_cast<uint64_t>(vocab));
            const BlockedRow::Span span = blocks.span_of(entry);
            std::vector<double> targets;
            for (int k = 0; k < 200; ++k) targets.push_back(unit(random) * total);
            // The span's ends and the doubles next to them, where only the
            // inversion can tell.
            for (double end : {span.lo, span.hi})
                for (double target : around(end, 64, total)) targets.push_back(target), ++at_ends;
            // Inside the span, well away from its ends.
            if (span.hi > span.lo) targets.push_back(0.5 * (span.lo + span.hi));
            for (double target : targets) {
                const bool expected = blocks.invert(target) == entry;
                ASSERT_EQ(blocks.inverts_to(span, target), expected)
                    << "row " << seed << ", entry " << entry << ", target " << target;
                named += expected;
                ++checked;
            }
        }
    }
    EXPECT_GT(at_ends, 30000);
    EXPECT_GT(named, 200);  // the comparison met draws that do name the entry
    EXPECT_GT(checked, 78000);
}

TEST(BlockedRow, AnEntryWithoutMassIsNeverNamed) {
    std::vector<float> row(300, 0.0f);
    row[7] = 0.25f;
    row[200] = 0.75f;
    const BlockedRow blocks(row.data(), static_cast<int64_t>(row.size()));
    const BlockedRow::Span span = blocks.span_of(100);
    EXPECT_EQ(span.lo, span.hi);
    for (double target = 0.0; target < 1.0; target += 1.0 / 64) EXPECT_FALSE(blocks.inverts_to(span, target));
    const BlockedRow::Span last = blocks.span_of(200);
    EXPECT_TRUE(blocks.inverts_to(last, 0.999999));
    EXPECT_FALSE(blocks.inverts_to(last, 0.1));
}

}  // namespace
}  // namespace cadenza::test
