// The acceptors that set reads_target_rows (plugin ABI 1.1) give the same
// result, draw for draw, whether the target's rows are filled in
// target_probabilities or lent one at a time through target_row; they ask
// only for the rows of the levels their walk reaches (so the engine computes
// no others), and a row the host cannot give is an error, not a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "acceptor_harness.h"
#include "token_groups.h"

namespace cadenza::test {
namespace {

namespace fs = std::filesystem;

constexpr int64_t vocab = 48;

struct Tree {
    std::vector<int32_t> parents;
};

// A chain of four and a tree with two children at the first two levels.
const Tree trees[] = {{{-1, 0, 1, 2}}, {{-1, -1, 0, 0, 1, 2, 4}}};

std::vector<float> random_row(std::mt19937_64& generator) {
    std::gamma_distribution<double> gamma(0.3, 1.0);
    std::vector<double> weights(vocab);
    double total = 0.0;
    for (double& w : weights) total += w = gamma(generator) + 1e-6;
    std::vector<float> row(vocab);
    for (int64_t i = 0; i < vocab; ++i) row[i] = static_cast<float>(weights[i] / total);
    return row;
}

// Target rows near the draft rows, so that drafts pass about half the time.
std::vector<float> near(const std::vector<float>& row, std::mt19937_64& generator) {
    const std::vector<float> noise = random_row(generator);
    std::vector<float> mixed(vocab);
    for (int64_t i = 0; i < vocab; ++i) mixed[i] = 0.6f * row[i] + 0.4f * noise[i];
    float total = 0.0f;
    for (float p : mixed) total += p;
    for (float& p : mixed) p /= total;
    return mixed;
}

struct Step {
    std::vector<int32_t> tokens;
    std::vector<float> target, draft;
};

Step random_step(const Tree& tree, std::mt19937_64& generator) {
    const size_t n = tree.parents.size();
    Step step;
    std::vector<std::vector<float>> drafts(n);
    for (size_t i = 0; i < n; ++i) {
        drafts[i] = random_row(generator);
        step.tokens.push_back(std::discrete_distribution<int32_t>(drafts[i].begin(), drafts[i].end())(generator));
        step.draft.insert(step.draft.end(), drafts[i].begin(), drafts[i].end());
    }
    // Row 0 after the prefix, row i + 1 after node i: near the draft row of
    // the node's first child when it has one.
    for (int32_t r = 0; r <= static_cast<int32_t>(n); ++r) {
        const auto child = std::find(tree.parents.begin(), tree.parents.end(), r - 1);
        const std::vector<float> row = child != tree.parents.end()
                                           ? near(drafts[static_cast<size_t>(child - tree.parents.begin())], generator)
                                           : random_row(generator);
        step.target.insert(step.target.end(), row.begin(), row.end());
    }
    return step;
}

class TargetRows : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        directory_ = fs::temp_directory_path() / ("cadenza_target_rows_" + std::to_string(::getpid()));
        fs::create_directories(directory_);
        pcg::TokenGroups groups;
        groups.vocab_size = vocab;
        groups.theta = 0.9;
        for (uint32_t t = 0; t + 2 < vocab; t += 2) groups.add_group({t, t + 1, t + 2});
        pcg::write_token_groups(directory_ / "groups.cdzgrp", groups);
    }
    void TearDown() override { fs::remove_all(directory_); }

    std::string table() const {
        const std::string name = GetParam();
        std::string table = "plugin = \"" + name + "\"\n";
        if (name == "acceptor.pcg") table += "groups = \"" + (directory_ / "groups.cdzgrp").string() + "\"\n";
        if (name == "acceptor.bias") table += "beta = 0.2\n";
        return table;
    }

    fs::path directory_;
};

TEST_P(TargetRows, LentRowsGiveTheSameResultsAsFilledRows) {
    AcceptorHarness filled(table(), 11), lent(table(), 11);
    ASSERT_EQ(lent.info().reads_target_rows, 1);
    lent.lend_target_rows(true);
    const bool needs_draft = filled.info().needs_draft_probabilities != 0;
    std::mt19937_64 generator(5);
    int64_t rows_asked = 0, rows_filled = 0, accepted = 0;
    for (const Tree& tree : trees) {
        const int32_t n = static_cast<int32_t>(tree.parents.size());
        for (int trial = 0; trial < 400; ++trial) {
            const Step step = random_step(tree, generator);
            const std::vector<float> draft = needs_draft ? step.draft : std::vector<float>{};
            const AcceptResult expected = filled.accept(step.tokens, tree.parents, vocab, step.target, draft);
            const AcceptResult result = lent.accept(step.tokens, tree.parents, vocab, step.target, draft);
            ASSERT_EQ(result.accepted_nodes, expected.accepted_nodes) << "trial " << trial;
            ASSERT_EQ(result.emitted, expected.emitted) << "trial " << trial;
            const std::set<int32_t> asked(lent.rows_asked().begin(), lent.rows_asked().end());
            ASSERT_FALSE(asked.empty());
            EXPECT_GE(*asked.begin(), 0);
            EXPECT_LE(*asked.rbegin(), n);
            // The levels reached: the prefix's row and the row after each accepted node.
            EXPECT_TRUE(asked.count(0));
            for (int32_t node : result.accepted_nodes) EXPECT_TRUE(asked.count(node + 1)) << "node " << node;
            if (std::string(GetParam()) != "acceptor.tolerance") {  // tolerance also reads rows of matched side nodes
                std::set<int32_t> reached{0};
                for (int32_t node : result.accepted_nodes) reached.insert(node + 1);
                EXPECT_EQ(asked, reached) << "trial " << trial;
            }
            rows_asked += static_cast<int64_t>(asked.size());
            rows_filled += n + 1;
            accepted += static_cast<int64_t>(result.accepted_nodes.size());
        }
    }
    EXPECT_GT(accepted, 0);
    EXPECT_LT(rows_asked, rows_filled * 3 / 4) << rows_asked << " rows asked of " << rows_filled;
}

TEST_P(TargetRows, ARowTheHostCannotGiveIsAnErrorNotACrash) {
    AcceptorHarness acceptor(table(), 3);
    acceptor.lend_target_rows(true, 0);
    std::mt19937_64 generator(9);
    const Tree& tree = trees[0];
    const Step step = random_step(tree, generator);
    const std::vector<float> draft = acceptor.info().needs_draft_probabilities ? step.draft : std::vector<float>{};
    try {
        acceptor.accept(step.tokens, tree.parents, vocab, step.target, draft);
        FAIL() << "a NULL row 0 was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("target row 0"), std::string::npos) << e.what();
    }
    acceptor.lend_target_rows(true);
    EXPECT_FALSE(acceptor.accept(step.tokens, tree.parents, vocab, step.target, draft).emitted.empty());
}

INSTANTIATE_TEST_SUITE_P(Plugins, TargetRows,
                         ::testing::Values("acceptor.exact", "acceptor.bias", "acceptor.tolerance", "acceptor.pcg"),
                         [](const auto& info) { return std::string(info.param).substr(9); });

}  // namespace
}  // namespace cadenza::test
