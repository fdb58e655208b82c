// acceptor.pcg (Principled Coarse-Graining, Yanuka et al.). Notation of the
// paper: q is the target, p the draft; Q_c and P_c their coarse (group)
// distributions under equal-split weights.
//
// Statistical claims, with fixed seeds and the harness's 0.999 chi-square
// threshold:
//  - the first emitted token's group is distributed as Q_c (chains and
//    sibling trees; through the plugin where groups partition the vocabulary,
//    through the sampler where they overlap and the group is latent);
//  - the emitted token follows the law Eq. 7 + Eq. 10 imply (overlapping
//    groups, through the plugin);
//  - singleton groups give standard speculative sampling (first token ~ q,
//    first two tokens ~ q(a) q(b | a));
//  - the thinning sampler draws norm([Q_c - P_c]+), and Eq. 10 within it;
//  - acceptance exceeds exact token matching on overlapping groups.
// Plus the groups file's validation, input validation and determinism.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "acceptor_harness.h"
#include "pcg_sampler.h"
#include "token_groups.h"

namespace cadenza::test {
namespace {

namespace fs = std::filesystem;
using pcg::GroupIndex;
using pcg::TokenGroups;

constexpr int64_t V = 8;
// Target q and draft p over 8 tokens.
const std::vector<float> q_row = {0.30f, 0.10f, 0.10f, 0.20f, 0.02f, 0.13f, 0.10f, 0.05f};
const std::vector<float> p_row = {0.05f, 0.25f, 0.10f, 0.05f, 0.25f, 0.05f, 0.05f, 0.20f};
// A second row, for positions after the first.
const std::vector<float> later_row = {0.10f, 0.15f, 0.05f, 0.20f, 0.10f, 0.10f, 0.25f, 0.05f};

// Overlapping groups: token 2 is in G0 and G1, token 3 in G1 and G2; token 7
// is in none (a singleton). Q_c = {.45, .15, .25, .10, .05} and
// P_c = {.35, .075, .325, .05, .20} (G4 = the singleton {7}); the residual
// [Q_c - P_c]+ = {.10, .075, 0, .05, 0}.
const std::vector<std::vector<uint32_t>> overlapping = {{0, 1, 2}, {2, 3}, {3, 4, 5}, {6}};
// A partition (each token's group is known from the token).
const std::vector<std::vector<uint32_t>> partition = {{0, 1, 2}, {3, 4}, {5, 6}};

TokenGroups make_groups(const std::vector<std::vector<uint32_t>>& sets, uint64_t vocab = V) {
    TokenGroups groups;
    groups.vocab_size = vocab;
    groups.theta = 0.5;
    for (const auto& set : sets) groups.add_group(set);
    return groups;
}

// A deterministic uniform source for calling the sampler directly.
struct TestUniform {
    std::mt19937_64 generator;
    explicit TestUniform(uint64_t seed) : generator(seed) {}
    static double next(void* self) {
        return static_cast<double>(static_cast<TestUniform*>(self)->generator() >> 11) * 0x1.0p-53;
    }
    pcg::UniformSource source() { return pcg::UniformSource{&TestUniform::next, this}; }
};

std::vector<double> coarse_all(const GroupIndex& index, const std::vector<float>& row) {
    std::vector<double> out;
    index.coarse_all(row.data(), out);
    return out;
}

std::vector<double> residual_of(const std::vector<double>& target, const std::vector<double>& draft) {
    std::vector<double> residual(target.size());
    double total = 0.0;
    for (size_t k = 0; k < target.size(); ++k) total += residual[k] = std::max(0.0, target[k] - draft[k]);
    for (double& r : residual) r /= total;
    return residual;
}

void expect_distribution(const std::vector<int64_t>& observed, const std::vector<double>& expected,
                         const std::string& what) {
    int degrees = 0;
    const double statistic = chi_square(observed, expected, degrees);
    ASSERT_GT(degrees, 0) << what;
    const double critical = chi_square_critical_999(degrees);
    EXPECT_LT(statistic, critical) << what << ": chi-square " << statistic << " with " << degrees
                                   << " degrees of freedom";
}

class PcgTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        directory_ = fs::temp_directory_path() / ("cadenza_pcg_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(directory_);
        fs::create_directories(directory_);
    }
    void TearDown() override { fs::remove_all(directory_); }

    fs::path write_groups(const std::string& name, const TokenGroups& groups) {
        const fs::path path = directory_ / name;
        pcg::write_token_groups(path, groups);
        return path;
    }

    static std::string table(const fs::path& groups, const std::string& extra = "") {
        return "plugin = \"acceptor.pcg\"\ngroups = \"" + groups.string() + "\"\n" + extra;
    }

    std::unique_ptr<AcceptorHarness> harness(const TokenGroups& groups, uint64_t seed = 7,
                                             const std::string& extra = "") {
        return std::make_unique<AcceptorHarness>(table(write_groups("groups.cdzgrp", groups), extra), seed);
    }

    fs::path directory_;
};

// Rows for a chain of `depth` nodes: target rows q then later_row, draft rows
// p then later_row; tokens drawn from the draft rows.
struct Chain {
    std::vector<int32_t> tokens, parents;
    std::vector<float> target, draft;
};

Chain draw_chain(int depth, uint64_t& state) {
    Chain chain;
    for (int i = 0; i < depth; ++i) {
        const std::vector<float>& draft = i == 0 ? p_row : later_row;
        chain.tokens.push_back(sample_from(draft, state));
        chain.parents.push_back(i - 1);
        chain.draft.insert(chain.draft.end(), draft.begin(), draft.end());
    }
    for (int i = 0; i <= depth; ++i) {
        const std::vector<float>& target = i == 0 ? q_row : later_row;
        chain.target.insert(chain.target.end(), target.begin(), target.end());
    }
    return chain;
}

// ---------------------------------------------------------------------------
// The plugin as the engine sees it

TEST_F(PcgTest, AsksForTargetAndDraftProbabilities) {
    const auto acceptor = harness(make_groups(overlapping));
    const cdz_acceptor_info info = acceptor->info();
    EXPECT_EQ(info.verifies, 1);
    EXPECT_EQ(info.needs_draft_probabilities, 1);
}

TEST_F(PcgTest, FirstGroupFollowsTargetCoarseDistributionThroughPlugin) {
    // Groups partition the vocabulary, so the emitted token tells its group.
    const TokenGroups groups = make_groups(partition);
    const GroupIndex index(groups);
    const auto acceptor = harness(groups);
    std::vector<int32_t> group_of(V);
    for (size_t k = 0; k < index.group_count(); ++k)
        for (size_t i = 0; i < index.group_size(k); ++i) group_of[index.group_members(k)[i]] = static_cast<int32_t>(k);
    std::vector<int64_t> counts(index.group_count(), 0);
    uint64_t state = 11;
    int64_t accepted = 0;
    const int64_t samples = 60000;
    for (int64_t s = 0; s < samples; ++s) {
        const Chain chain = draw_chain(2, state);
        const AcceptResult result = acceptor->accept(chain.tokens, chain.parents, V, chain.target, chain.draft);
        ASSERT_EQ(result.emitted.size(), result.accepted_nodes.size() + 1);
        for (size_t k = 0; k < result.accepted_nodes.size(); ++k)
            ASSERT_EQ(result.emitted[k], chain.tokens[static_cast<size_t>(result.accepted_nodes[k])]);
        ++counts[static_cast<size_t>(group_of[static_cast<size_t>(result.emitted[0])])];
        accepted += result.accepted_nodes.empty() ? 0 : 1;
    }
    expect_distribution(counts, coarse_all(index, q_row), "first emitted group");
    // Some of both branches ran: the first node is accepted with probability
    // sum_k min(P_c, Q_c) < 1.
    EXPECT_GT(accepted, samples / 2);
    EXPECT_LT(accepted, samples);
}

TEST_F(PcgTest, EmittedTokenFollowsGroupAcceptancePlusWithinGroupCorrection) {
    // Overlapping groups: the first token's law is
    //   sum_k p(t) w(k,t) min(1, Q_c/P_c)(k)               (accepted draft, Eq. 6-7)
    // + (1 - beta) sum_k R_c(k) q(t) w(k,t) / Q_c(k)       (correction, Eq. 8-10).
    const TokenGroups groups = make_groups(overlapping);
    const GroupIndex index(groups);
    const std::vector<double> qc = coarse_all(index, q_row), pc = coarse_all(index, p_row);
    const std::vector<double> residual = residual_of(qc, pc);
    double beta = 0.0;
    for (size_t k = 0; k < qc.size(); ++k) beta += std::min(qc[k], pc[k]);
    std::vector<double> expected(V, 0.0);
    for (size_t k = 0; k < index.group_count(); ++k)
        for (size_t i = 0; i < index.group_size(k); ++i) {
            const uint32_t t = index.group_members(k)[i];
            expected[t] += p_row[t] * index.weight(t) * std::min(1.0, qc[k] / pc[k]);
            expected[t] += (1.0 - beta) * residual[k] * q_row[t] * index.weight(t) / qc[k];
        }
    const auto acceptor = harness(groups, 3);
    std::vector<int64_t> counts(V, 0);
    uint64_t state = 5;
    for (int64_t s = 0; s < 60000; ++s) {
        const Chain chain = draw_chain(1, state);
        ++counts[static_cast<size_t>(acceptor->accept(chain.tokens, chain.parents, V, chain.target, chain.draft).emitted[0])];
    }
    expect_distribution(counts, expected, "first emitted token");
}

TEST_F(PcgTest, TheTargetsCodeInTheAcceptedGroupMakesTheFirstAudioTokenTheTargets) {
    // group_code = "target": an accepted group's audio token is z ~ q(. | K)
    // (Eq. 10), as a correction's is. K is distributed as Q_c whichever way
    // it was reached, so the first audio token's law is
    //   sum_k Q_c(k) q(t) w(k, t) / Q_c(k) = q(t):
    // the target's own, with overlapping groups too. The drafted token (the
    // emitted one, which the sequence keeps) has the law of the test above.
    const TokenGroups groups = make_groups(overlapping);
    const auto acceptor = harness(groups, 13, "group_code = \"target\"\n");
    const auto drafted = harness(groups, 13);
    std::vector<int64_t> audio(V, 0), emitted(V, 0);
    uint64_t state = 17;
    int64_t substituted = 0;
    for (int64_t s = 0; s < 60000; ++s) {
        const Chain chain = draw_chain(2, state);
        const AcceptResult result = acceptor->accept(chain.tokens, chain.parents, V, chain.target, chain.draft);
        ASSERT_EQ(result.audio.size(), result.emitted.size());
        for (size_t k = 0; k < result.accepted_nodes.size(); ++k) {
            ASSERT_EQ(result.emitted[k], chain.tokens[static_cast<size_t>(result.accepted_nodes[k])]);
            substituted += result.audio[k] != result.emitted[k] ? 1 : 0;
        }
        // The correction or the bonus is the target's own token either way.
        EXPECT_EQ(result.audio.back(), result.emitted.back());
        ++audio[static_cast<size_t>(result.audio[0])];
        ++emitted[static_cast<size_t>(result.emitted[0])];
        if (s < 200) {  // the same draws up to the group codes, which come last
            const AcceptResult plain = drafted->accept(chain.tokens, chain.parents, V, chain.target, chain.draft);
            ASSERT_EQ(plain.emitted, result.emitted);
            ASSERT_EQ(plain.audio, plain.emitted);
            drafted->reseed(static_cast<uint64_t>(s) + 100);
            acceptor->reseed(static_cast<uint64_t>(s) + 100);
        }
    }
    std::vector<double> q(q_row.begin(), q_row.end());
    expect_distribution(audio, q, "first audio token");
    EXPECT_GT(substituted, 1000);
    int degrees = 0;
    const double drafted_statistic = chi_square(emitted, q, degrees);
    EXPECT_GT(drafted_statistic, chi_square_critical_999(degrees))
        << "the drafted token should not follow q here (p is far from it)";
}

TEST_F(PcgTest, SingletonGroupsAreStandardSpeculativeSampling) {
    // Two files that mean the same: no groups at all, and one singleton per token.
    std::vector<std::vector<uint32_t>> singletons;
    for (uint32_t t = 0; t < V; ++t) singletons.push_back({t});
    for (const TokenGroups& groups : {make_groups({}), make_groups(singletons)}) {
        const auto acceptor = harness(groups, 21);
        std::vector<int64_t> counts(V, 0);
        uint64_t state = 9;
        int64_t accepted = 0;
        const int64_t samples = 60000;
        for (int64_t s = 0; s < samples; ++s) {
            const Chain chain = draw_chain(2, state);
            const AcceptResult result = acceptor->accept(chain.tokens, chain.parents, V, chain.target, chain.draft);
            ++counts[static_cast<size_t>(result.emitted[0])];
            accepted += result.accepted_nodes.empty() ? 0 : 1;
        }
        expect_distribution(counts, std::vector<double>(q_row.begin(), q_row.end()), "first token with singletons");
        // The acceptance rate is standard speculative sampling's sum_t min(p, q).
        double rate = 0.0;
        for (int64_t t = 0; t < V; ++t) rate += std::min(p_row[t], q_row[t]);
        const double sigma = std::sqrt(rate * (1 - rate) / samples);
        EXPECT_NEAR(static_cast<double>(accepted) / samples, rate, 4.5 * sigma);
    }
}

TEST_F(PcgTest, SingletonGroupsGiveTheTargetsJointOverTwoPositions) {
    // The target's row after node 0 depends on node 0's token; the first two
    // emitted tokens must follow q(a) q(b | a) exactly.
    std::mt19937_64 generator(4);
    std::vector<std::vector<float>> after(V), draft_after(V);
    for (int64_t a = 0; a < V; ++a) {
        std::gamma_distribution<double> gamma(1.0, 1.0);
        for (auto* row : {&after[a], &draft_after[a]}) {
            std::vector<double> w(V);
            double total = 0.0;
            for (double& x : w) total += x = gamma(generator) + 0.01;
            for (double x : w) row->push_back(static_cast<float>(x / total));
        }
    }
    const auto acceptor = harness(make_groups({}), 13);
    std::vector<int64_t> counts(V * V, 0);
    uint64_t state = 17;
    for (int64_t s = 0; s < 80000; ++s) {
        const int32_t x0 = sample_from(p_row, state);
        const int32_t x1 = sample_from(draft_after[static_cast<size_t>(x0)], state);
        std::vector<float> target = q_row, draft = p_row;
        target.insert(target.end(), after[x0].begin(), after[x0].end());
        target.insert(target.end(), later_row.begin(), later_row.end());
        draft.insert(draft.end(), draft_after[x0].begin(), draft_after[x0].end());
        const AcceptResult result = acceptor->accept({x0, x1}, {-1, 0}, V, target, draft);
        ASSERT_GE(result.emitted.size(), 1u);
        int32_t second;
        if (result.emitted.size() >= 2) {
            second = result.emitted[1];
        } else {
            // Rejected at the first position: the second token would come from
            // q(. | emitted[0]) in the next step; draw it here from that row.
            second = sample_from(after[static_cast<size_t>(result.emitted[0])], state);
        }
        ++counts[static_cast<size_t>(result.emitted[0] * V + second)];
    }
    std::vector<double> expected(V * V);
    for (int64_t a = 0; a < V; ++a)
        for (int64_t b = 0; b < V; ++b) expected[a * V + b] = q_row[a] * after[a][b];
    expect_distribution(counts, expected, "first two tokens with singletons");
}

TEST_F(PcgTest, SiblingsKeepTheFirstGroupDistributed) {
    // Three i.i.d. children at the root, two of them with a child; groups
    // partition the vocabulary so the group shows in the token.
    const TokenGroups groups = make_groups(partition);
    const GroupIndex index(groups);
    const auto acceptor = harness(groups, 29);
    std::vector<int32_t> group_of(V);
    for (size_t k = 0; k < index.group_count(); ++k)
        for (size_t i = 0; i < index.group_size(k); ++i) group_of[index.group_members(k)[i]] = static_cast<int32_t>(k);
    const std::vector<int32_t> parents = {-1, -1, -1, 0, 1};
    std::vector<int64_t> counts(index.group_count(), 0);
    uint64_t state = 31;
    int64_t later_siblings = 0;
    for (int64_t s = 0; s < 50000; ++s) {
        std::vector<int32_t> tokens;
        std::vector<float> target = q_row, draft;
        for (size_t i = 0; i < parents.size(); ++i) {
            const auto& row = parents[i] < 0 ? p_row : later_row;
            tokens.push_back(sample_from(row, state));
            draft.insert(draft.end(), row.begin(), row.end());
            target.insert(target.end(), later_row.begin(), later_row.end());
        }
        const AcceptResult result = acceptor->accept(tokens, parents, V, target, draft);
        if (!result.accepted_nodes.empty()) {
            ASSERT_EQ(parents[static_cast<size_t>(result.accepted_nodes[0])], -1);
            later_siblings += result.accepted_nodes[0] > 0 ? 1 : 0;
        }
        for (size_t k = 1; k < result.accepted_nodes.size(); ++k)
            ASSERT_EQ(parents[static_cast<size_t>(result.accepted_nodes[k])], result.accepted_nodes[k - 1]);
        ++counts[static_cast<size_t>(group_of[static_cast<size_t>(result.emitted[0])])];
    }
    expect_distribution(counts, coarse_all(index, q_row), "first emitted group with siblings");
    EXPECT_GT(later_siblings, 1000);  // the second and third children were used
}

TEST_F(PcgTest, EmptyTreeEmitsOneTokenFromTheTarget) {
    const auto acceptor = harness(make_groups(overlapping), 41);
    std::vector<int64_t> counts(V, 0);
    for (int64_t s = 0; s < 40000; ++s) {
        const AcceptResult result = acceptor->accept({}, {}, V, q_row, {});
        ASSERT_TRUE(result.accepted_nodes.empty());
        ASSERT_EQ(result.emitted.size(), 1u);
        ++counts[static_cast<size_t>(result.emitted[0])];
    }
    expect_distribution(counts, std::vector<double>(q_row.begin(), q_row.end()), "empty tree");
}

TEST_F(PcgTest, AcceptsMoreThanExactMatchingOnOverlappingGroups) {
    const TokenGroups groups = make_groups(overlapping);
    const GroupIndex index(groups);
    const std::vector<double> qc = coarse_all(index, q_row), pc = coarse_all(index, p_row);
    double pcg_rate = 0.0, exact_rate = 0.0;
    for (size_t k = 0; k < qc.size(); ++k) pcg_rate += std::min(qc[k], pc[k]);
    for (int64_t t = 0; t < V; ++t) exact_rate += std::min(p_row[t], q_row[t]);
    ASSERT_NEAR(pcg_rate, 0.775, 1e-6);
    ASSERT_NEAR(exact_rate, 0.47, 1e-6);

    auto measure = [&](AcceptorHarness& acceptor) {
        uint64_t state = 77;
        int64_t accepted = 0;
        for (int64_t s = 0; s < 30000; ++s) {
            const Chain chain = draw_chain(1, state);
            accepted += acceptor.accept(chain.tokens, chain.parents, V, chain.target, chain.draft).accepted_nodes.size();
        }
        return static_cast<double>(accepted) / 30000.0;
    };
    const double measured_pcg = measure(*harness(groups, 5));
    const double measured_singletons = measure(*harness(make_groups({}), 5));
    EXPECT_NEAR(measured_pcg, pcg_rate, 0.012);
    EXPECT_NEAR(measured_singletons, exact_rate, 0.015);
    EXPECT_GT(measured_pcg, measured_singletons + 0.2);
    // acceptor.exact itself, when it is built alongside.
    try {
        AcceptorHarness exact("plugin = \"acceptor.exact\"\n", 5);
        const double measured_exact = measure(exact);
        EXPECT_NEAR(measured_exact, exact_rate, 0.015);
        EXPECT_GT(measured_pcg, measured_exact + 0.2);
    } catch (const std::exception& error) {
        std::cout << "acceptor.exact not available, compared with the exact rate only: " << error.what() << '\n';
    }
}

TEST_F(PcgTest, SameSeedReproducesTheRunBitForBit) {
    const TokenGroups groups = make_groups(overlapping);
    auto run = [&](AcceptorHarness& acceptor) {
        std::vector<int32_t> trace;
        uint64_t state = 123;
        for (int s = 0; s < 2000; ++s) {
            const Chain chain = draw_chain(3, state);
            const AcceptResult result = acceptor.accept(chain.tokens, chain.parents, V, chain.target, chain.draft);
            trace.insert(trace.end(), result.emitted.begin(), result.emitted.end());
            trace.push_back(-1);
        }
        return trace;
    };
    const auto first = harness(groups, 99);
    const auto trace = run(*first);
    const auto second = harness(groups, 99);
    EXPECT_EQ(run(*second), trace);
    first->reseed(99);
    EXPECT_EQ(run(*first), trace);
    const auto other = harness(groups, 100);
    EXPECT_NE(run(*other), trace);
}

// ---------------------------------------------------------------------------
// The sampler, where the group is latent (overlapping groups)

TEST_F(PcgTest, FirstGroupFollowsTargetCoarseDistributionWithOverlaps) {
    const GroupIndex index(make_groups(overlapping));
    TestUniform uniform(1234);
    const pcg::UniformSource source = uniform.source();
    std::vector<int64_t> counts(index.group_count(), 0), accepted_counts(index.group_count(), 0);
    uint64_t state = 3;
    for (int64_t s = 0; s < 200000; ++s) {
        const Chain chain = draw_chain(1, state);
        pcg::StepInput input;
        input.node_count = 1;
        input.tokens = chain.tokens.data();
        input.parents = chain.parents.data();
        input.target.matrix = chain.target.data();
        input.draft.matrix = chain.draft.data();
        pcg::StepOutput output;
        pcg::pcg_step(index, input, 100, source, output);
        ASSERT_EQ(output.groups.size(), output.emitted.size());
        ++counts[output.groups[0]];
        if (!output.accepted_nodes.empty()) ++accepted_counts[output.groups[0]];
        // The emitted token belongs to its group.
        const uint32_t* members = index.group_members(output.groups[0]);
        ASSERT_TRUE(std::binary_search(members, members + index.group_size(output.groups[0]),
                                       static_cast<uint32_t>(output.emitted[0])));
    }
    const std::vector<double> qc = coarse_all(index, q_row), pc = coarse_all(index, p_row);
    expect_distribution(counts, qc, "first group, overlapping groups");
    // Accepted groups alone follow min(P_c, Q_c) / beta (Eq. 11, first term).
    std::vector<double> accepted_law(qc.size());
    double beta = 0.0;
    for (size_t k = 0; k < qc.size(); ++k) beta += accepted_law[k] = std::min(qc[k], pc[k]);
    for (double& mass : accepted_law) mass /= beta;
    expect_distribution(accepted_counts, accepted_law, "accepted groups");
}

TEST_F(PcgTest, SiblingsKeepTheFirstGroupDistributedWithOverlaps) {
    const GroupIndex index(make_groups(overlapping));
    TestUniform uniform(99);
    const pcg::UniformSource source = uniform.source();
    const std::vector<int32_t> parents = {-1, -1, -1};
    std::vector<int64_t> counts(index.group_count(), 0);
    uint64_t state = 8;
    for (int64_t s = 0; s < 150000; ++s) {
        std::vector<int32_t> tokens;
        std::vector<float> target = q_row, draft;
        for (size_t i = 0; i < parents.size(); ++i) {
            tokens.push_back(sample_from(p_row, state));
            draft.insert(draft.end(), p_row.begin(), p_row.end());
            target.insert(target.end(), later_row.begin(), later_row.end());
        }
        pcg::StepInput input{3, tokens.data(), parents.data(), {target.data()}, {draft.data()}};
        pcg::StepOutput output;
        pcg::pcg_step(index, input, 100, source, output);
        ++counts[output.groups[0]];
    }
    expect_distribution(counts, coarse_all(index, q_row), "first group, siblings, overlapping groups");
}

TEST_F(PcgTest, ThinningSamplesTheCoarseResidual) {
    const GroupIndex index(make_groups(overlapping));
    const std::vector<double> qc = coarse_all(index, q_row), pc = coarse_all(index, p_row);
    const std::vector<double> residual = residual_of(qc, pc);
    // The joint law of (group, token): R_c(k) q(t) w(k,t) / Q_c(k) (Eq. 8-10).
    std::vector<double> joint(index.group_count() * V, 0.0);
    for (size_t k = 0; k < index.group_count(); ++k)
        for (size_t i = 0; i < index.group_size(k); ++i) {
            const uint32_t t = index.group_members(k)[i];
            joint[k * V + t] = residual[k] * q_row[t] * index.weight(t) / qc[k];
        }
    // Plain thinning, thinning cut short (some draws fall back), and the
    // enumeration alone must all draw the same law.
    for (const int64_t rounds : {int64_t{1000}, int64_t{1}, int64_t{0}}) {
        TestUniform uniform(static_cast<uint64_t>(rounds) + 5);
        const pcg::UniformSource source = uniform.source();
        std::vector<int64_t> groups(index.group_count(), 0), pairs(joint.size(), 0);
        int64_t proposals = 0, enumerated = 0;
        const int64_t samples = 100000;
        for (int64_t s = 0; s < samples; ++s) {
            const pcg::ResidualDraw draw = pcg::sample_coarse_residual(index, q_row.data(), p_row.data(), rounds, source);
            ++groups[draw.group];
            ++pairs[draw.group * V + draw.token];
            proposals += draw.rounds;
            enumerated += draw.enumerated ? 1 : 0;
        }
        const std::string what = "residual with max_rounds " + std::to_string(rounds);
        expect_distribution(groups, residual, what + " (groups)");
        expect_distribution(pairs, joint, what + " (group, token)");
        if (rounds == 1000) {
            // Expected proposals: 1 / TV(P_c, Q_c) = 1 / 0.225.
            EXPECT_NEAR(static_cast<double>(proposals) / samples, 1.0 / 0.225, 0.1);
            EXPECT_EQ(enumerated, 0);
        } else if (rounds == 1) {
            EXPECT_NEAR(static_cast<double>(enumerated) / samples, 1.0 - 0.225, 0.01);
        } else {
            EXPECT_EQ(enumerated, samples);
        }
    }
}

// The proposals y ~ q walk blocks of 64 entries: a vocabulary of several
// blocks, zeros among the entries, and the groups' residual drawn as the
// thinning's law says.
TEST_F(PcgTest, ThinningDrawsOverAVocabularyOfManyBlocks) {
    constexpr uint64_t vocab = 300;
    std::vector<std::vector<uint32_t>> pairs;
    for (uint32_t k = 0; k < vocab / 2; ++k) pairs.push_back({2 * k, 2 * k + 1});
    const GroupIndex index(make_groups(pairs, vocab));
    // Even groups hold twice the target's mass they hold in the draft, odd
    // ones half; every third group puts all of it on its second token.
    std::vector<float> q(vocab), p(vocab);
    for (uint32_t k = 0; k < vocab / 2; ++k) {
        const float target = k % 2 == 0 ? 2.0f : 1.0f, draft = k % 2 == 0 ? 1.0f : 2.0f;
        q[2 * k] = k % 3 == 0 ? 0.0f : target / 2;
        q[2 * k + 1] = k % 3 == 0 ? target : target / 2;
        p[2 * k] = p[2 * k + 1] = draft / 2;
    }
    for (std::vector<float>* row : {&q, &p}) {
        double total = 0.0;
        for (float v : *row) total += v;
        for (float& v : *row) v = static_cast<float>(v / total);
    }
    const std::vector<double> residual = residual_of(coarse_all(index, q), coarse_all(index, p));
    TestUniform uniform(11);
    const pcg::UniformSource source = uniform.source();
    std::vector<int64_t> groups(index.group_count(), 0);
    for (int64_t s = 0; s < 200000; ++s) {
        const pcg::ResidualDraw draw = pcg::sample_coarse_residual(index, q.data(), p.data(), 1000, source);
        ASSERT_FALSE(draw.enumerated);
        ASSERT_GT(q[draw.token], 0.0f) << "token " << draw.token << " has no target mass";
        ASSERT_EQ(draw.token / 2, draw.group);
        ++groups[draw.group];
    }
    expect_distribution(groups, residual, "residual over 300 tokens in blocks of 64");
}

TEST_F(PcgTest, ForcedRejectionsDrawTheResidualThroughThePlugin) {
    // The draft always proposes token 7, which the target never emits
    // (q(7) = 0 and 7 is a singleton): every node is rejected and the
    // correction is drawn from norm([Q_c - P_c]+) over a partition.
    std::vector<float> q = q_row;
    q[0] += q[7];
    q[7] = 0.0f;
    std::vector<float> p = {0.10f, 0.0f, 0.05f, 0.05f, 0.0f, 0.0f, 0.0f, 0.80f};
    const TokenGroups groups = make_groups(partition);
    const GroupIndex index(groups);
    const std::vector<double> residual = residual_of(coarse_all(index, q), coarse_all(index, p));
    std::vector<int32_t> group_of(V);
    for (size_t k = 0; k < index.group_count(); ++k)
        for (size_t i = 0; i < index.group_size(k); ++i) group_of[index.group_members(k)[i]] = static_cast<int32_t>(k);
    const auto acceptor = harness(groups, 55);
    std::vector<int64_t> counts(index.group_count(), 0);
    std::vector<float> target = q;
    target.insert(target.end(), later_row.begin(), later_row.end());
    for (int64_t s = 0; s < 40000; ++s) {
        const AcceptResult result = acceptor->accept({7}, {-1}, V, target, p);
        ASSERT_TRUE(result.accepted_nodes.empty());
        ++counts[static_cast<size_t>(group_of[static_cast<size_t>(result.emitted[0])])];
    }
    expect_distribution(counts, residual, "forced corrections");
}

// ---------------------------------------------------------------------------
// Validation

TEST_F(PcgTest, GroupsFileRoundTrips) {
    TokenGroups groups = make_groups(overlapping, 100);
    groups.theta = 0.42;
    const fs::path path = write_groups("round.cdzgrp", groups);
    const TokenGroups read = pcg::read_token_groups(path);
    EXPECT_EQ(read.vocab_size, 100u);
    EXPECT_EQ(read.theta, 0.42);
    EXPECT_EQ(read.offsets, groups.offsets);
    EXPECT_EQ(read.members, groups.members);
    EXPECT_EQ(fs::file_size(path), pcg::groups_header_size + 8 * 5 + 4 * 9);
}

class MalformedGroupsTest : public PcgTest {
protected:
    // The bytes of a valid file with the overlapping groups.
    std::string valid_bytes() {
        const fs::path path = write_groups("valid.cdzgrp", make_groups(overlapping));
        std::ifstream in(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    fs::path write_bytes(const std::string& name, const std::string& bytes) {
        const fs::path path = directory_ / name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    static void put_u32(std::string& bytes, size_t offset, uint32_t value) {
        for (int i = 0; i < 4; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
    }
    static void put_u64(std::string& bytes, size_t offset, uint64_t value) {
        for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<char>(value >> (8 * i));
    }
    // Reading fails with the file's name and every fragment; so does creating
    // the plugin from it.
    void expect_refused(const fs::path& path, const std::vector<std::string>& fragments) {
        std::string message;
        try {
            pcg::read_token_groups(path);
        } catch (const pcg::GroupsError& error) {
            message = error.what();
        }
        ASSERT_FALSE(message.empty()) << "read " << path << " without an error";
        EXPECT_NE(message.find(path.string()), std::string::npos) << message;
        for (const auto& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
        try {
            AcceptorHarness acceptor(table(path), 1);
            ADD_FAILURE() << "the plugin accepted " << path;
        } catch (const std::exception& error) {
            const std::string plugin_message = error.what();
            EXPECT_NE(plugin_message.find(path.string()), std::string::npos) << plugin_message;
            EXPECT_NE(plugin_message.find(fragments.front()), std::string::npos) << plugin_message;
        }
    }
};

// Offsets in the valid file: header 48 bytes, 5 offsets (40 bytes), then 9 members.
constexpr size_t members_at = pcg::groups_header_size + 8 * 5;

TEST_F(MalformedGroupsTest, Truncated) {
    const std::string bytes = valid_bytes();
    expect_refused(write_bytes("short.cdzgrp", bytes.substr(0, bytes.size() - 3)), {"truncated"});
    expect_refused(write_bytes("header.cdzgrp", bytes.substr(0, 20)), {"truncated", "20 bytes"});
    expect_refused(write_bytes("empty.cdzgrp", ""), {"bad magic"});
}

TEST_F(MalformedGroupsTest, BadMagic) {
    std::string bytes = valid_bytes();
    bytes[0] = 'X';
    expect_refused(write_bytes("magic.cdzgrp", bytes), {"bad magic"});
    expect_refused(write_bytes("text.cdzgrp", "{\"groups\": [[0, 1]]}"), {"bad magic"});
}

TEST_F(MalformedGroupsTest, WrongVersion) {
    std::string bytes = valid_bytes();
    put_u32(bytes, 8, 2);
    expect_refused(write_bytes("version.cdzgrp", bytes), {"unsupported groups format version 2"});
}

TEST_F(MalformedGroupsTest, OutOfRangeId) {
    std::string bytes = valid_bytes();
    put_u32(bytes, members_at + 4 * 8, 8);  // the last member of G3 = {6} becomes 8, with V = 8
    expect_refused(write_bytes("range.cdzgrp", bytes), {"group 3", "member id 8", "out of range", "byte offset 120"});
}

TEST_F(MalformedGroupsTest, UnsortedAndDuplicateMembers) {
    std::string bytes = valid_bytes();
    put_u32(bytes, members_at + 4 * 1, 0);  // G0 = {0, 0, 2}
    expect_refused(write_bytes("duplicate.cdzgrp", bytes), {"group 0", "not sorted ascending without duplicates"});
    bytes = valid_bytes();
    put_u32(bytes, members_at + 4 * 3, 3);  // G1 = {3, 3}
    put_u32(bytes, members_at + 4 * 4, 2);  // G1 = {3, 2}
    expect_refused(write_bytes("unsorted.cdzgrp", bytes), {"group 1", "3 then 2"});
}

TEST_F(MalformedGroupsTest, InconsistentOffsets) {
    std::string bytes = valid_bytes();
    put_u64(bytes, pcg::groups_header_size + 8 * 2, 2);  // G1 would start before G0 ends... and G0 = {0, 1}
    put_u64(bytes, pcg::groups_header_size + 8 * 1, 4);  // offsets 0, 4, 2: decreasing
    expect_refused(write_bytes("offsets.cdzgrp", bytes), {"group 1", "inconsistent"});
    bytes = valid_bytes();
    put_u64(bytes, pcg::groups_header_size + 8 * 4, 8);  // the last offset is not the member count
    expect_refused(write_bytes("last.cdzgrp", bytes), {"last offset is 8"});
    bytes = valid_bytes();
    put_u64(bytes, pcg::groups_header_size + 8 * 1, 0);  // G0 empty
    expect_refused(write_bytes("empty_group.cdzgrp", bytes), {"group 0 is empty"});
    expect_refused(write_bytes("trailing.cdzgrp", valid_bytes() + "xx"), {"2 unexpected bytes"});
}

TEST_F(PcgTest, MissingGroupsParameterOrFileIsRefused) {
    EXPECT_THROW(AcceptorHarness("plugin = \"acceptor.pcg\"\n", 1), std::exception);
    EXPECT_THROW(AcceptorHarness(table(directory_ / "absent.cdzgrp"), 1), std::exception);
}

TEST_F(PcgTest, RefusesInvalidInput) {
    const fs::path path = write_groups("groups.cdzgrp", make_groups(overlapping));
    AcceptorHarness acceptor(table(path), 1);
    auto message_of = [&](const std::function<void()>& body) {
        try {
            body();
        } catch (const std::exception& error) {
            return std::string(error.what());
        }
        return std::string("(no error)");
    };
    std::vector<float> target2 = q_row;
    target2.insert(target2.end(), later_row.begin(), later_row.end());
    // A vocabulary other than the groups file's: the message names the file.
    std::vector<float> wide(10, 0.1f);
    std::string message = message_of([&] { acceptor.accept({}, {}, 10, wide, {}); });
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("vocabulary of 8"), std::string::npos) << message;
    message = message_of([&] { acceptor.accept({8}, {-1}, V, target2, p_row); });
    EXPECT_NE(message.find("token 8"), std::string::npos) << message;
    message = message_of([&] { acceptor.accept({1}, {0}, V, target2, p_row); });
    EXPECT_NE(message.find("parent 0"), std::string::npos) << message;
    message = message_of([&] { acceptor.accept({1}, {-1}, V, target2, {}); });
    EXPECT_NE(message.find("draft's probabilities"), std::string::npos) << message;
    std::vector<float> unnormalized = p_row;
    unnormalized[0] += 0.5f;
    message = message_of([&] { acceptor.accept({1}, {-1}, V, target2, unnormalized); });
    EXPECT_NE(message.find("draft row 0 sums to"), std::string::npos) << message;
    std::vector<float> negative = target2;
    negative[V + 2] = -0.1f;
    negative[V + 3] += 0.1f;
    message = message_of([&] { acceptor.accept({1}, {-1}, V, negative, p_row); });
    EXPECT_NE(message.find("target row 1"), std::string::npos) << message;
    negative[V + 2] = std::numeric_limits<float>::quiet_NaN();
    message = message_of([&] { acceptor.accept({1}, {-1}, V, negative, p_row); });
    EXPECT_NE(message.find("non-negative"), std::string::npos) << message;
}

}  // namespace
}  // namespace cadenza::test
