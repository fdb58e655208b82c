// acceptor.tolerance (VADUSA): more target samples accept more drafts; tau = 1
// at temperature 0 is argmax matching; the kept path is the most probable
// accepted one, ties going to the longer path, then the lower index.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "acceptor_harness.h"
#include "basic_acceptors_support.h"

namespace cadenza::test::basic {
namespace {

std::string tolerance(int tau) { return table_of("acceptor.tolerance", "tau = " + std::to_string(tau) + "\n"); }

// Target rows from {token: probability} lists.
std::vector<float> sparse_rows(const std::vector<std::vector<std::pair<int32_t, float>>>& rows, int64_t vocab) {
    std::vector<float> out(rows.size() * static_cast<size_t>(vocab), 0.0f);
    for (size_t r = 0; r < rows.size(); ++r)
        for (const auto& [token, p] : rows[r]) out[r * static_cast<size_t>(vocab) + static_cast<size_t>(token)] = p;
    return out;
}

TEST(ToleranceAcceptor, DescribesItself) {
    const AcceptorHarness harness(table_of("acceptor.tolerance"));
    EXPECT_EQ(harness.info().verifies, 1);
    EXPECT_EQ(harness.info().needs_draft_probabilities, 0);
}

TEST(ToleranceAcceptor, MeanAcceptedLengthRisesWithTau) {
    // A MEDUSA-like tree: two candidates per level, three levels deep.
    ToyModel model(12, 131, 1.0, 0.5);
    const std::vector<int32_t> shape = {-1, -1, 0, 0, 1, 1, 2, 2, 4, 4};
    const int steps = 4000;
    std::vector<double> means;
    for (int tau : {1, 3, 8}) {
        const AcceptorHarness harness(tolerance(tau), 313);
        uint64_t draw_state = 323;  // the same drafts for every tau
        int64_t accepted = 0;
        for (int s = 0; s < steps; ++s) {
            const Step step = draft_step(model, {}, shape, draw_state);
            const AcceptResult result = harness.accept(step.tokens, step.parents, model.vocab(), step.target, {});
            ASSERT_EQ(result.emitted.size(), result.accepted_nodes.size() + 1);
            accepted += static_cast<int64_t>(result.accepted_nodes.size());
        }
        means.push_back(static_cast<double>(accepted) / steps);
        std::cout << "[ tolerance tau " << tau << " ] mean accepted length " << means.back() << "\n";
    }
    for (size_t k = 1; k < means.size(); ++k) EXPECT_GT(means[k], means[k - 1] + 0.1) << "tau step " << k;
}

TEST(ToleranceAcceptor, TauOneAtTemperatureZeroIsArgmaxMatching) {
    const AcceptorHarness harness(tolerance(1), 333);
    std::mt19937_64 generator(33);
    for (int c = 0; c < 500; ++c) {
        const int64_t V = std::uniform_int_distribution<int64_t>(12, 20)(generator);
        const int32_t n = std::uniform_int_distribution<int32_t>(0, 10)(generator);
        const std::vector<int32_t> parents = random_shape(n, generator);
        std::vector<int32_t> argmax(static_cast<size_t>(n) + 1), tokens(static_cast<size_t>(n));
        auto any_token = [&] { return std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(V) - 1)(generator); };
        for (auto& a : argmax) a = any_token();
        // Siblings carry distinct tokens (argmax matching is then unambiguous);
        // about half the drafts are the argmax they are judged against.
        std::vector<std::set<int32_t>> used(static_cast<size_t>(n) + 1);
        for (int32_t i = 0; i < n; ++i) {
            const size_t slot = static_cast<size_t>(parents[static_cast<size_t>(i)] + 1);
            int32_t token = std::bernoulli_distribution(0.5)(generator) ? argmax[slot] : any_token();
            while (used[slot].count(token)) token = any_token();
            used[slot].insert(token);
            tokens[static_cast<size_t>(i)] = token;
        }
        const AcceptResult expected = argmax_walk(tokens, parents, argmax);
        const AcceptResult result = harness.accept(tokens, parents, V, one_hot_rows(argmax, V), {});
        ASSERT_EQ(result.accepted_nodes, expected.accepted_nodes) << "case " << c;
        ASSERT_EQ(result.emitted, expected.emitted) << "case " << c;
    }
}

TEST(ToleranceAcceptor, KeepsTheMostProbableAcceptedPath) {
    // With tau = 64 every token of probability >= 0.1 is sampled (misses have
    // probability <= 0.9^64 ~ 1e-3 and only for node 4, whose path loses anyway).
    //
    //   prefix -+- 0 (tok 1, .5) -+- 2 (tok 3, .5) --- 7 (tok 8, .5)   product .125, depth 3
    //           |                 +- 8 (tok 4, .5)                      product .25,  depth 2  <- kept
    //           +- 1 (tok 2, .5) -+- 3 (tok 5, .9) -+- 5 (tok 7, .5)   product .225, depth 3
    //                             |                 +- 6 (tok 9, 0)    never accepted
    //                             +- 4 (tok 6, .1)                     product .05
    // Longest-path or first-match rules would pick another path.
    const int64_t V = 10;
    const std::vector<int32_t> tokens = {1, 2, 3, 5, 6, 7, 9, 8, 4};
    const std::vector<int32_t> parents = {-1, -1, 0, 1, 1, 3, 3, 2, 0};
    const std::vector<float> target = sparse_rows(
        {
            {{1, 0.5f}, {2, 0.5f}},  // row 0: after the prefix
            {{3, 0.5f}, {4, 0.5f}},  // after node 0
            {{5, 0.9f}, {6, 0.1f}},  // after node 1
            {{8, 0.5f}, {0, 0.5f}},  // after node 2
            {{7, 0.5f}, {8, 0.5f}},  // after node 3
            {{0, 1.0f}},             // after node 4
            {{0, 1.0f}},             // after node 5
            {{0, 1.0f}},             // after node 6
            {{0, 1.0f}},             // after node 7
            {{6, 1.0f}},             // after node 8: the emitted token is 6
        },
        V);
    const AcceptorHarness harness(tolerance(64), 343);
    for (int s = 0; s < 50; ++s) {
        const AcceptResult result = harness.accept(tokens, parents, V, target, {});
        EXPECT_EQ(result.accepted_nodes, (std::vector<int32_t>{0, 8}));
        EXPECT_EQ(result.emitted, (std::vector<int32_t>{1, 4, 6}));
    }
}

TEST(ToleranceAcceptor, TiesGoToTheLongerPathThenTheLowerIndex) {
    const int64_t V = 6;
    const AcceptorHarness harness(tolerance(64), 353);
    {
        // Path 0 and path 1-2 both have product .5: the longer one wins.
        const std::vector<float> target =
            sparse_rows({{{1, 0.5f}, {2, 0.5f}}, {{5, 1.0f}}, {{3, 1.0f}}, {{4, 1.0f}}}, V);
        const AcceptResult result = harness.accept({1, 2, 3}, {-1, -1, 1}, V, target, {});
        EXPECT_EQ(result.accepted_nodes, (std::vector<int32_t>{1, 2}));
        EXPECT_EQ(result.emitted, (std::vector<int32_t>{2, 3, 4}));
    }
    {
        // Two equally likely leaves of equal depth: the lower index wins,
        // also when both carry the same token.
        const std::vector<float> target =
            sparse_rows({{{1, 0.5f}, {2, 0.5f}}, {{3, 1.0f}}, {{4, 1.0f}}}, V);
        for (int s = 0; s < 20; ++s) {
            EXPECT_EQ(harness.accept({2, 1}, {-1, -1}, V, target, {}).accepted_nodes, (std::vector<int32_t>{0}));
            EXPECT_EQ(harness.accept({1, 1}, {-1, -1}, V, target, {}).accepted_nodes, (std::vector<int32_t>{0}));
        }
    }
}

TEST(ToleranceAcceptor, EmptyTreeSamplesRowZero) {
    ToyModel model(8, 141);
    const AcceptorHarness harness(tolerance(3), 414);
    std::vector<int64_t> counts(8, 0);
    for (int s = 0; s < 20000; ++s) {
        const AcceptResult result = harness.accept({}, {}, 8, model.target({}), {});
        ASSERT_EQ(result.emitted.size(), 1u);
        ++counts[static_cast<size_t>(result.emitted[0])];
    }
    const ChiSquare chi = chi_square_test(counts, expected_first(model));
    EXPECT_TRUE(chi.passes()) << chi;
}

TEST(ToleranceAcceptor, DrawsOverAVocabularyOfManyBlocks) {
    // 300 tokens, five blocks of 64 with the fourth all zero and zeros
    // scattered elsewhere: the target's tokens follow the row, and none
    // without mass is drawn. A child is accepted when one of tau draws hits it.
    constexpr int64_t vocab = 300;
    std::vector<float> row(vocab, 0.0f);
    double total = 0.0;
    for (int64_t t = 0; t < vocab; ++t) {
        if ((t >= 192 && t < 256) || t % 7 == 3) continue;
        total += row[static_cast<size_t>(t)] = static_cast<float>(1 + t % 5);
    }
    std::vector<double> expected(vocab);
    for (int64_t t = 0; t < vocab; ++t) expected[static_cast<size_t>(t)] = row[static_cast<size_t>(t)] / total;
    for (float& p : row) p = static_cast<float>(p / total);
    const AcceptorHarness harness(tolerance(3), 616);
    std::vector<int64_t> counts(vocab, 0);
    for (int s = 0; s < 60000; ++s) {
        const AcceptResult result = harness.accept({}, {}, vocab, row, {});
        ASSERT_EQ(result.emitted.size(), 1u);
        ++counts[static_cast<size_t>(result.emitted[0])];
    }
    const ChiSquare chi = chi_square_test(counts, expected);
    EXPECT_TRUE(chi.passes()) << chi;

    // One child on token 299 (the last entry, in the last partial block).
    std::vector<float> rows = row;
    rows.insert(rows.end(), row.begin(), row.end());
    int64_t accepted = 0;
    constexpr int trials = 40000;
    for (int s = 0; s < trials; ++s) accepted += harness.accept({299}, {-1}, vocab, rows, {}).accepted_nodes.size();
    const double p = expected[299], hit = 1.0 - std::pow(1.0 - p, 3);
    const double deviation = std::sqrt(trials * hit * (1.0 - hit));
    EXPECT_NEAR(static_cast<double>(accepted), trials * hit, 4.0 * deviation) << "p(299) = " << p;
}

TEST(ToleranceAcceptor, IgnoresDraftProbabilities) {
    ToyModel model(10, 151, 1.0, 0.5);
    const std::vector<int32_t> shape = {-1, -1, 0, 1, 2};
    AcceptorHarness with(tolerance(3), 515), without(tolerance(3), 515);
    uint64_t draw_state = 525;
    for (int s = 0; s < 300; ++s) {
        const Step step = draft_step(model, {}, shape, draw_state);
        const AcceptResult a = with.accept(step.tokens, step.parents, 10, step.target, step.draft);
        const AcceptResult b = without.accept(step.tokens, step.parents, 10, step.target, {});
        ASSERT_EQ(a.accepted_nodes, b.accepted_nodes);
        ASSERT_EQ(a.emitted, b.emitted);
    }
}

}  // namespace
}  // namespace cadenza::test::basic
