// run_parts: every part runs once with its share, the parts meet at the
// barrier, and a part's failure reaches the caller without leaving the
// others waiting at a barrier forever.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "parallel_parts.h"

namespace cadenza {
namespace {

using llama::PartBarrier;

TEST(ParallelParts, EveryPartRunsItsShareAndMeetsTheOthersAtTheBarrier) {
    constexpr int parts = 3;
    constexpr long long rows = 100;
    std::vector<int> written(rows, 0), seen_after_barrier(parts, 0);
    llama::run_parts(parts, [&](int part, int parts_running, PartBarrier& barrier) {
        ASSERT_EQ(parts_running, parts);
        for (long long r = llama::part_begin(rows, part, parts); r < llama::part_begin(rows, part + 1, parts); ++r)
            written[static_cast<size_t>(r)] += 1;
        barrier.arrive_and_wait();
        // Past the barrier every part's rows are written.
        int total = 0;
        for (int w : written) total += w;
        seen_after_barrier[static_cast<size_t>(part)] = total;
        barrier.arrive_and_wait();
    });
    for (int w : written) EXPECT_EQ(w, 1);
    for (int seen : seen_after_barrier) EXPECT_EQ(seen, rows);
}

TEST(ParallelParts, APartsFailureReachesTheCallerAndReleasesTheOthers) {
    for (const int failing : {0, 1, 2}) {
        std::atomic<int> finished{0};
        try {
            llama::run_parts(3, [&](int part, int, PartBarrier& barrier) {
                if (part == failing) throw std::invalid_argument("part " + std::to_string(part) + " failed");
                barrier.arrive_and_wait();  // would wait forever for the failed part
                barrier.arrive_and_wait();
                ++finished;
            });
            FAIL() << "part " << failing << "'s failure was lost";
        } catch (const std::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()), "part " + std::to_string(failing) + " failed");
        }
        EXPECT_EQ(finished.load(), 0);
    }
}

TEST(ParallelParts, OnePartRunsOnTheCallersThread) {
    int calls = 0;
    llama::run_parts(1, [&](int part, int parts_running, PartBarrier& barrier) {
        EXPECT_EQ(part, 0);
        EXPECT_EQ(parts_running, 1);
        barrier.arrive_and_wait();  // alone: returns at once
        ++calls;
    });
    EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace cadenza
