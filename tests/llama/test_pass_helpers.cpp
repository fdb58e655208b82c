// PassHelpers and StagedShares: every share of every stage runs exactly
// once whoever claims it, a stage's writes are seen by the next stage on
// every thread, failures reach the caller after the pass ends, passes from
// two threads at once each run whole, and helpers that went to sleep wake
// for the next pass.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pass_helpers.h"

namespace cadenza {
namespace {

using llama::PassHelpers;
using llama::StagedShares;

// `stages` stages of `shares` shares: share s of stage t adds the sum of
// stage t - 1's cells to cell s, so a stage that began before the last
// ended, or a share run twice or never, changes the totals.
std::vector<long long> run_chained_stages(PassHelpers& helpers, int stages, int shares,
                                          std::vector<int>* parts_seen = nullptr) {
    std::vector<std::vector<long long>> cells(static_cast<size_t>(stages),
                                              std::vector<long long>(static_cast<size_t>(shares), 0));
    std::vector<std::atomic<int>> runs(static_cast<size_t>(stages * shares));
    std::vector<int> seen(static_cast<size_t>(helpers.parts()), 0);
    helpers.run(stages, [&](int part, StagedShares& staged) {
        seen[static_cast<size_t>(part)] = 1;
        for (int t = 0; t < stages; ++t)
            staged.run(t, shares, [&](int s) {
                runs[static_cast<size_t>(t * shares + s)].fetch_add(1);
                long long before = 1;
                if (t > 0)
                    for (long long c : cells[static_cast<size_t>(t - 1)]) before += c;
                cells[static_cast<size_t>(t)][static_cast<size_t>(s)] = before + s;
            });
    });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
    if (parts_seen) *parts_seen = seen;
    std::vector<long long> totals;
    for (const auto& stage : cells) {
        long long total = 0;
        for (long long c : stage) total += c;
        totals.push_back(total);
    }
    return totals;
}

std::vector<long long> expected_totals(int stages, int shares) {
    std::vector<long long> totals;
    long long previous = 0;
    for (int t = 0; t < stages; ++t) {
        long long total = 0;
        for (int s = 0; s < shares; ++s) total += 1 + (t > 0 ? previous : 0) + s;
        totals.push_back(total);
        previous = total;
    }
    return totals;
}

TEST(PassHelpers, EveryShareRunsOnceAndEachStageSeesTheLastOnesWrites) {
    for (const int helpers_count : {0, 1, 3}) {
        PassHelpers helpers(helpers_count);
        EXPECT_EQ(helpers.parts(), helpers_count + 1);
        for (int pass = 0; pass < 200; ++pass) {
            const int stages = 1 + pass % 7, shares = pass % 5;
            ASSERT_EQ(run_chained_stages(helpers, stages, shares), expected_totals(stages, shares))
                << helpers_count << " helpers, pass " << pass;
        }
    }
}

// One pass of two shares in which the caller's share waits (up to 10 s)
// until a helper has taken the other: whether a helper came.
bool a_helper_joins(PassHelpers& helpers) {
    std::atomic<bool> helped{false};
    helpers.run(1, [&](int part, StagedShares& staged) {
        staged.run(0, 2, [&](int) {
            if (part > 0) {
                helped = true;
                return;
            }
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!helped && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        });
    });
    return helped;
}

TEST(PassHelpers, HelpersJoinThePasses) {
    PassHelpers helpers(1);
    EXPECT_TRUE(a_helper_joins(helpers));
    EXPECT_TRUE(a_helper_joins(helpers));  // and the next pass too
}

TEST(PassHelpers, AFailingShareReachesTheCallerAfterThePassEnds) {
    PassHelpers helpers(2);
    for (int failing = 0; failing < 6; ++failing) {
        std::atomic<int> later_stage_runs{0};
        try {
            helpers.run(2, [&](int, StagedShares& staged) {
                staged.run(0, 6, [&](int s) {
                    if (s == failing) throw std::runtime_error("share " + std::to_string(s) + " failed");
                });
                staged.run(1, 4, [&](int) { later_stage_runs.fetch_add(1); });
            });
            ADD_FAILURE() << "no exception";
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()), "share " + std::to_string(failing) + " failed");
        }
        EXPECT_EQ(later_stage_runs.load(), 4);
        // The helpers serve the next pass as before.
        EXPECT_EQ(run_chained_stages(helpers, 3, 4), expected_totals(3, 4));
    }
}

TEST(PassHelpers, PassesFromTwoThreadsAtOnceEachRunWhole) {
    PassHelpers helpers(1);
    std::atomic<bool> wrong{false};
    auto passes = [&] {
        for (int pass = 0; pass < 300; ++pass)
            if (run_chained_stages(helpers, 4, 3) != expected_totals(4, 3)) wrong = true;
    };
    std::thread other(passes);
    passes();
    other.join();
    EXPECT_FALSE(wrong.load());
}

TEST(PassHelpers, SleepingHelpersWakeForTheNextPass) {
    PassHelpers helpers(2);
    EXPECT_EQ(run_chained_stages(helpers, 3, 6), expected_totals(3, 6));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spinning: asleep
    EXPECT_TRUE(a_helper_joins(helpers));
}

}  // namespace
}  // namespace cadenza
