// acceptor.viterbi (Viterbi over multi-token prediction heads, Nguyen et al.
// ICASSP 2025), its transitions file and `cadenza build-transitions`.
//
// The objective every test scores paths with, independently of the plugin:
//   score(x_1..x_n) = sum_t log S_t(x_t) + sum_{t>=2} log Q(x_{t-1}, x_t)
// S_t = head t's row of draft_probabilities, Q = the transitions file.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "acceptor_harness.h"
#include "error.h"
#include "transition_matrix.h"

namespace {

namespace fs = std::filesystem;
using cadenza::TransitionFileError;
using cadenza::TransitionMatrix;
using cadenza::test::AcceptorHarness;

// A directory removed at the end of the test.
class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = fs::temp_directory_path() /
                ("cadenza_viterbi_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ignored;
        fs::remove_all(path_, ignored);
    }
    fs::path operator/(const std::string& name) const { return path_ / name; }

private:
    fs::path path_;
};

// A random distribution over `size` outcomes, all positive, uneven.
std::vector<double> random_distribution(std::mt19937_64& rng, size_t size, double spread = 1.5) {
    std::normal_distribution<double> normal(0.0, spread);
    std::vector<double> values(size);
    double total = 0.0;
    for (auto& value : values) total += value = std::exp(normal(rng));
    for (auto& value : values) value /= total;
    return values;
}

std::vector<float> to_float(const std::vector<double>& values) { return {values.begin(), values.end()}; }

TransitionMatrix random_dense(std::mt19937_64& rng, int64_t vocab) {
    std::vector<float> values;
    for (int64_t row = 0; row < vocab; ++row) {
        const auto distribution = to_float(random_distribution(rng, static_cast<size_t>(vocab)));
        values.insert(values.end(), distribution.begin(), distribution.end());
    }
    return TransitionMatrix::make_dense(vocab, std::move(values), {});
}

// Rows of up to top_n stored entries with a floor below 1 / V, so stored
// entries and floors mix in the lattice.
TransitionMatrix random_sparse(std::mt19937_64& rng, int64_t vocab) {
    const auto top_n = static_cast<uint32_t>(std::uniform_int_distribution<int64_t>(1, vocab / 2)(rng));
    std::vector<uint64_t> offsets{0};
    std::vector<int32_t> ids;
    std::vector<float> probabilities, floors;
    std::vector<int32_t> all(static_cast<size_t>(vocab));
    for (int32_t i = 0; i < vocab; ++i) all[i] = i;
    for (int64_t row = 0; row < vocab; ++row) {
        const auto count = static_cast<size_t>(std::uniform_int_distribution<uint32_t>(0, top_n)(rng));
        std::shuffle(all.begin(), all.end(), rng);
        std::vector<int32_t> chosen(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count));
        std::sort(chosen.begin(), chosen.end());
        const double floor =
            count == 0 ? 1.0 / vocab : std::uniform_real_distribution<double>(0.05, 0.9)(rng) / vocab;
        const double stored_mass = 1.0 - static_cast<double>(vocab - static_cast<int64_t>(count)) * floor;
        const auto weights = random_distribution(rng, count);
        for (size_t e = 0; e < count; ++e) {
            ids.push_back(chosen[e]);
            probabilities.push_back(static_cast<float>(weights[e] * stored_mass));
        }
        floors.push_back(static_cast<float>(floor));
        offsets.push_back(ids.size());
    }
    return TransitionMatrix::make_sparse(vocab, top_n, std::move(offsets), std::move(ids), std::move(probabilities),
                                         std::move(floors), {});
}

std::string table(const fs::path& transitions, int top_k, const std::string& extra = "") {
    return "plugin = \"acceptor.viterbi\"\ntransitions = \"" + transitions.string() +
           "\"\ntop_k = " + std::to_string(top_k) + "\n" + extra;
}

// Head t's top-k as the acceptor must see it: most probable first, ties to
// the lower id, zeros excluded.
std::vector<int32_t> top_k_of(const float* row, int64_t vocab, int k) {
    std::vector<int32_t> order;
    for (int32_t i = 0; i < vocab; ++i)
        if (row[i] > 0.0f) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
    if (order.size() > static_cast<size_t>(k)) order.resize(static_cast<size_t>(k));
    return order;
}

double score(const std::vector<int32_t>& path, const std::vector<float>& heads, int64_t vocab,
             const TransitionMatrix& q) {
    double total = 0.0;
    for (size_t t = 0; t < path.size(); ++t) {
        total += std::log(static_cast<double>(heads[t * vocab + path[t]]));
        if (t > 0) total += std::log(static_cast<double>(q.probability(path[t - 1], path[t])));
    }
    return total;
}

struct BruteForce {
    double best = -INFINITY;
    std::vector<int32_t> best_path;
    int near_best = 0;  // paths within tolerance of the best
};

// Every path through `states[t]` (each step's allowed tokens).
BruteForce brute_force(const std::vector<std::vector<int32_t>>& states, const std::vector<float>& heads,
                       int64_t vocab, const TransitionMatrix& q) {
    BruteForce result;
    std::vector<double> scores;
    std::vector<int32_t> path(states.size());
    std::vector<std::vector<int32_t>> paths;
    std::function<void(size_t)> walk = [&](size_t t) {
        if (t == states.size()) {
            const double value = score(path, heads, vocab, q);
            scores.push_back(value);
            if (value > result.best) {
                result.best = value;
                result.best_path = path;
            }
            return;
        }
        for (int32_t token : states[t]) {
            path[t] = token;
            walk(t + 1);
        }
    };
    walk(0);
    for (double value : scores)
        if (value >= result.best - 1e-9) ++result.near_best;
    return result;
}

// Checks the acceptor's tokens against brute force: same objective value, and
// the same path when the optimum is unique.
void expect_optimal(const std::vector<int32_t>& emitted, const std::vector<std::vector<int32_t>>& states,
                    const std::vector<float>& heads, int64_t vocab, const TransitionMatrix& q,
                    const std::string& context) {
    ASSERT_EQ(emitted.size(), states.size()) << context;
    for (size_t t = 0; t < states.size(); ++t)
        ASSERT_NE(std::find(states[t].begin(), states[t].end(), emitted[t]), states[t].end())
            << context << ": step " << t << " took token " << emitted[t] << ", not one of its states";
    const BruteForce expected = brute_force(states, heads, vocab, q);
    EXPECT_NEAR(score(emitted, heads, vocab, q), expected.best, 1e-9 * (1.0 + std::fabs(expected.best))) << context;
    if (expected.near_best == 1) EXPECT_EQ(emitted, expected.best_path) << context;
}

std::vector<int32_t> chain_parents(int32_t n) {
    std::vector<int32_t> parents(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) parents[i] = i - 1;
    return parents;
}

// n head rows; node tokens are each head's argmax, as draft.mtp proposes.
struct Heads {
    std::vector<int32_t> tokens;
    std::vector<float> rows;
};

Heads random_heads(std::mt19937_64& rng, int32_t n, int64_t vocab) {
    Heads heads;
    for (int32_t t = 0; t < n; ++t) {
        const auto row = to_float(random_distribution(rng, static_cast<size_t>(vocab), 1.2));
        heads.tokens.push_back(static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin()));
        heads.rows.insert(heads.rows.end(), row.begin(), row.end());
    }
    return heads;
}

void check_against_brute_force(bool sparse, bool union_lattice, int matrices, int cases_per_k, int max_n,
                               int max_k) {
    std::mt19937_64 rng(sparse ? 2024 : 1001 + (union_lattice ? 7 : 0));
    TempDir dir;
    int checked = 0;
    for (int m = 0; m < matrices; ++m) {
        const int64_t vocab = std::uniform_int_distribution<int64_t>(10, 30)(rng);
        const TransitionMatrix q = sparse ? random_sparse(rng, vocab) : random_dense(rng, vocab);
        const fs::path path = dir / ("q" + std::to_string(m) + ".cdztrn");
        q.save(path.string());
        const TransitionMatrix loaded = TransitionMatrix::load(path.string());
        for (int k = 1; k <= max_k; ++k) {
            const std::string extra = std::string("sample_first = false\n") +
                                      (union_lattice ? "lattice = \"union\"\n" : "");
            AcceptorHarness harness(table(path, k, extra));
            for (int c = 0; c < cases_per_k; ++c) {
                const int32_t n = std::uniform_int_distribution<int32_t>(1, max_n)(rng);
                const Heads heads = random_heads(rng, n, vocab);
                const auto result = harness.accept(heads.tokens, chain_parents(n), vocab, {}, heads.rows);
                EXPECT_TRUE(result.accepted_nodes.empty());
                std::vector<std::vector<int32_t>> states;
                std::vector<int32_t> all;
                for (int32_t t = 0; t < n; ++t) {
                    states.push_back(top_k_of(heads.rows.data() + t * vocab, vocab, k));
                    all.insert(all.end(), states.back().begin(), states.back().end());
                }
                if (union_lattice) {
                    std::sort(all.begin(), all.end());
                    all.erase(std::unique(all.begin(), all.end()), all.end());
                    for (auto& step : states) step = all;
                }
                expect_optimal(result.emitted, states, heads.rows, vocab, loaded,
                               "matrix " + std::to_string(m) + " (V " + std::to_string(vocab) + "), k " +
                                   std::to_string(k) + ", n " + std::to_string(n));
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, matrices * max_k * cases_per_k);
}

// ------------------------------------------------------------------------
// The acceptor

TEST(ViterbiAcceptor, EmitsWithoutVerificationAndNeedsDraftProbabilities) {
    std::mt19937_64 rng(5);
    TempDir dir;
    random_dense(rng, 10).save((dir / "q.cdztrn").string());
    AcceptorHarness harness(table(dir / "q.cdztrn", 3));
    const cdz_acceptor_info info = harness.info();
    EXPECT_EQ(info.verifies, 0);
    EXPECT_EQ(info.needs_draft_probabilities, 1);
}

TEST(ViterbiAcceptor, MatchesBruteForceOverDenseTransitions) {
    check_against_brute_force(/*sparse=*/false, /*union=*/false, 12, 10, 5, 4);
}

TEST(ViterbiAcceptor, MatchesBruteForceOverSparseTransitions) {
    check_against_brute_force(/*sparse=*/true, /*union=*/false, 12, 10, 5, 4);
}

TEST(ViterbiAcceptor, UnionLatticeMatchesBruteForce) {
    // m^n paths: every step may take any token of any head's top-k.
    check_against_brute_force(/*sparse=*/false, /*union=*/true, 4, 8, 4, 3);
    check_against_brute_force(/*sparse=*/true, /*union=*/true, 4, 8, 4, 3);
}

TEST(ViterbiAcceptor, HeadsLimitsEmittedTokens) {
    std::mt19937_64 rng(77);
    TempDir dir;
    const int64_t vocab = 20;
    const TransitionMatrix q = random_dense(rng, vocab);
    q.save((dir / "q.cdztrn").string());
    const Heads heads = random_heads(rng, 6, vocab);
    for (int limit : {0, 1, 3, 6, 10}) {
        AcceptorHarness harness(table(dir / "q.cdztrn", 3, "sample_first = false\nheads = " +
                                                               std::to_string(limit) + "\n"));
        const auto result = harness.accept(heads.tokens, chain_parents(6), vocab, {}, heads.rows);
        const size_t used = limit == 0 ? 6 : std::min(limit, 6);
        EXPECT_EQ(result.emitted.size(), used) << "heads = " << limit;
        EXPECT_TRUE(result.accepted_nodes.empty());
        // The first `used` heads alone decide: the rest are ignored.
        std::vector<std::vector<int32_t>> states;
        for (size_t t = 0; t < used; ++t) states.push_back(top_k_of(heads.rows.data() + t * vocab, vocab, 3));
        expect_optimal(result.emitted, states,
                       std::vector<float>(heads.rows.begin(), heads.rows.begin() + used * vocab), vocab, q,
                       "heads = " + std::to_string(limit));
    }
}

TEST(ViterbiAcceptor, WarnsOnceWhenTheDrafterProposesHeadsItDoesNotUse) {
    std::mt19937_64 rng(78);
    TempDir dir;
    const int64_t vocab = 20;
    random_dense(rng, vocab).save((dir / "q.cdztrn").string());
    const Heads heads = random_heads(rng, 6, vocab);
    std::ostringstream log;
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
    spdlog::default_logger()->sinks().push_back(sink);
    const auto level = spdlog::default_logger()->level();
    spdlog::set_level(spdlog::level::warn);
    auto warnings = [&](const std::string& params, int calls) {
        log.str("");
        AcceptorHarness harness(table(dir / "q.cdztrn", 3, params));
        for (int c = 0; c < calls; ++c) harness.accept(heads.tokens, chain_parents(6), vocab, {}, heads.rows);
        const std::string text = log.str();
        size_t count = 0;
        for (size_t at = text.find("rows nobody uses"); at != std::string::npos; at = text.find("rows nobody uses", at + 1))
            ++count;
        return std::make_pair(count, text);
    };
    const auto fewer = warnings("heads = 4\n", 3);
    const auto all = warnings("heads = 6\n", 3);
    const auto every = warnings("", 3);
    spdlog::default_logger()->sinks().pop_back();
    spdlog::set_level(level);
    EXPECT_EQ(fewer.first, 1u) << fewer.second;
    EXPECT_NE(fewer.second.find("heads = 4 but the drafter proposes 6 tokens a step"), std::string::npos)
        << fewer.second;
    EXPECT_NE(fewer.second.find("num_heads = 4"), std::string::npos) << fewer.second;
    EXPECT_EQ(all.first, 0u) << all.second;
    EXPECT_EQ(every.first, 0u) << every.second;
}

TEST(ViterbiAcceptor, FirstStateIsSampledFromHeadOneTopK) {
    // Head 1's top-4 renormalized is the first token's distribution; the
    // rest of the path is the Viterbi optimum given that first token.
    std::mt19937_64 rng(11);
    TempDir dir;
    const int64_t vocab = 12;
    const int k = 4;
    const TransitionMatrix q = random_dense(rng, vocab);
    q.save((dir / "q.cdztrn").string());
    Heads heads = random_heads(rng, 3, vocab);
    const std::vector<float> first = {0.05f, 0.30f, 0.02f, 0.20f, 0.10f, 0.15f,
                                      0.04f, 0.03f, 0.04f, 0.03f, 0.02f, 0.02f};
    std::copy(first.begin(), first.end(), heads.rows.begin());
    heads.tokens[0] = 1;
    const std::vector<int32_t> top = top_k_of(first.data(), vocab, k);
    ASSERT_EQ(top, (std::vector<int32_t>{1, 3, 5, 4}));

    std::vector<double> expected(static_cast<size_t>(vocab), 0.0);
    double mass = 0.0;
    for (int32_t token : top) mass += first[token];
    for (int32_t token : top) expected[token] = first[token] / mass;
    // The best continuation of each first token, by brute force.
    std::map<int32_t, std::vector<int32_t>> continuation;
    for (int32_t token : top) {
        std::vector<std::vector<int32_t>> states{{token}};
        for (int t = 1; t < 3; ++t) states.push_back(top_k_of(heads.rows.data() + t * vocab, vocab, k));
        continuation[token] = brute_force(states, heads.rows, vocab, q).best_path;
    }

    AcceptorHarness harness(table(dir / "q.cdztrn", k), 123);  // sample_first defaults to true
    std::vector<int64_t> observed(static_cast<size_t>(vocab), 0);
    const int draws = 20000;
    for (int i = 0; i < draws; ++i) {
        const auto result = harness.accept(heads.tokens, chain_parents(3), vocab, {}, heads.rows);
        ASSERT_EQ(result.emitted.size(), 3u);
        ++observed[result.emitted[0]];
        if (continuation.count(result.emitted[0]))
            ASSERT_EQ(result.emitted, continuation[result.emitted[0]]);
    }
    int degrees = 0;
    const double statistic = cadenza::test::chi_square(observed, expected, degrees);
    EXPECT_EQ(degrees, k - 1);
    EXPECT_LT(statistic, cadenza::test::chi_square_critical_999(degrees))
        << "first tokens 1/3/5/4: " << observed[1] << " " << observed[3] << " " << observed[5] << " "
        << observed[4];
}

TEST(ViterbiAcceptor, TheFirstTokenFollowsTheLastCommittedOne) {
    // With the committed sequence, the first token is drawn from head 1's
    // top-k times Q(x_0, .), renormalized; prefix_transition = false ignores x_0.
    std::mt19937_64 rng(17);
    TempDir dir;
    const int64_t vocab = 10;
    const int k = 3;
    const TransitionMatrix q = random_dense(rng, vocab);
    q.save((dir / "q.cdztrn").string());
    Heads heads = random_heads(rng, 2, vocab);
    const std::vector<int32_t> top = top_k_of(heads.rows.data(), vocab, k);
    const int32_t x0 = 6;
    const std::vector<int32_t> sequence = {2, 9, x0};
    auto expected_first = [&](bool with_transition) {
        std::vector<double> expected(static_cast<size_t>(vocab), 0.0);
        double mass = 0.0;
        for (int32_t token : top)
            mass += expected[token] = heads.rows[token] * (with_transition ? q.probability(x0, token) : 1.0);
        for (double& value : expected) value /= mass;
        return expected;
    };
    for (const bool with_transition : {true, false}) {
        AcceptorHarness harness(
            table(dir / "q.cdztrn", k, with_transition ? "" : "prefix_transition = false\n"), 29);
        std::vector<int64_t> observed(static_cast<size_t>(vocab), 0);
        for (int i = 0; i < 20000; ++i)
            ++observed[harness.accept(heads.tokens, chain_parents(2), vocab, {}, heads.rows,
                                      AcceptorHarness::default_sampling(), sequence)
                           .emitted[0]];
        int degrees = 0;
        const double statistic = cadenza::test::chi_square(observed, expected_first(with_transition), degrees);
        EXPECT_EQ(degrees, k - 1);
        EXPECT_LT(statistic, cadenza::test::chi_square_critical_999(degrees)) << "with_transition " << with_transition;
    }
}

TEST(ViterbiAcceptor, OneHotFirstHeadMakesTheFirstTokenCertain) {
    // Greedy sampling (temperature 0) makes the heads' rows one-hot: the
    // zeros are not candidates, so sampling the first state changes nothing.
    std::mt19937_64 rng(12);
    TempDir dir;
    const int64_t vocab = 15;
    random_dense(rng, vocab).save((dir / "q.cdztrn").string());
    Heads heads = random_heads(rng, 4, vocab);
    std::fill(heads.rows.begin(), heads.rows.begin() + vocab, 0.0f);
    heads.rows[7] = 1.0f;
    heads.tokens[0] = 7;
    AcceptorHarness harness(table(dir / "q.cdztrn", 5), 9);
    for (int i = 0; i < 200; ++i)
        EXPECT_EQ(harness.accept(heads.tokens, chain_parents(4), vocab, {}, heads.rows).emitted[0], 7);
}

TEST(ViterbiAcceptor, SeedReproducesTheRun) {
    std::mt19937_64 rng(31);
    TempDir dir;
    const int64_t vocab = 25;
    random_sparse(rng, vocab).save((dir / "q.cdztrn").string());
    std::vector<Heads> cases;
    for (int i = 0; i < 50; ++i) cases.push_back(random_heads(rng, 5, vocab));
    auto run = [&](AcceptorHarness& harness) {
        std::vector<int32_t> tokens;
        for (const auto& heads : cases) {
            const auto result = harness.accept(heads.tokens, chain_parents(5), vocab, {}, heads.rows);
            tokens.insert(tokens.end(), result.emitted.begin(), result.emitted.end());
        }
        return tokens;
    };
    const std::string config = table(dir / "q.cdztrn", 4);
    AcceptorHarness first(config, 42), second(config, 42), other(config, 43);
    const auto reference = run(first);
    EXPECT_EQ(run(second), reference);
    first.reseed(42);
    EXPECT_EQ(run(first), reference);
    EXPECT_NE(run(other), reference);
}

TEST(ViterbiAcceptor, LargeSparseVocabularyEightHeads) {
    // V = 65,536 as with a large codec, 8 heads, k = 3: the lattice tokens
    // come from a small "hot" set whose rows store transitions among
    // themselves, so stored entries and floors both matter.
    std::mt19937_64 rng(65536);
    TempDir dir;
    const int64_t vocab = 65536;
    std::vector<int32_t> hot;
    std::uniform_int_distribution<int32_t> any(0, static_cast<int32_t>(vocab - 1));
    while (hot.size() < 40) {
        const int32_t token = any(rng);
        if (std::find(hot.begin(), hot.end(), token) == hot.end()) hot.push_back(token);
    }
    std::vector<uint64_t> offsets{0};
    std::vector<int32_t> ids;
    std::vector<float> probabilities, floors;
    for (int64_t row = 0; row < vocab; ++row) {
        std::vector<int32_t> chosen;
        const bool is_hot = std::find(hot.begin(), hot.end(), row) != hot.end();
        const size_t count = is_hot ? 16 : 2;
        while (chosen.size() < count) {
            const int32_t token = is_hot ? hot[std::uniform_int_distribution<size_t>(0, hot.size() - 1)(rng)] : any(rng);
            if (std::find(chosen.begin(), chosen.end(), token) == chosen.end()) chosen.push_back(token);
        }
        std::sort(chosen.begin(), chosen.end());
        const double floor = 0.5 / vocab;
        const double stored_mass = 1.0 - static_cast<double>(vocab - static_cast<int64_t>(count)) * floor;
        const auto weights = random_distribution(rng, count);
        for (size_t e = 0; e < count; ++e) {
            ids.push_back(chosen[e]);
            probabilities.push_back(static_cast<float>(weights[e] * stored_mass));
        }
        floors.push_back(static_cast<float>(floor));
        offsets.push_back(ids.size());
    }
    const fs::path path = dir / "q.cdztrn";
    TransitionMatrix::make_sparse(vocab, 16, std::move(offsets), std::move(ids), std::move(probabilities),
                                  std::move(floors), {})
        .save(path.string());
    const TransitionMatrix q = TransitionMatrix::load(path.string());

    const int32_t n = 8;
    const int k = 3;
    AcceptorHarness harness(table(path, k, "sample_first = false\n"));
    std::vector<Heads> cases;
    for (int c = 0; c < 5; ++c) {
        Heads heads;
        for (int32_t t = 0; t < n; ++t) {
            std::vector<double> row(static_cast<size_t>(vocab), 1e-6);
            for (int32_t token : hot) row[token] = std::exp(std::normal_distribution<double>(0.0, 1.0)(rng));
            double total = 0.0;
            for (double value : row) total += value;
            std::vector<float> normalized(row.size());
            for (size_t i = 0; i < row.size(); ++i) normalized[i] = static_cast<float>(row[i] / total);
            heads.tokens.push_back(
                static_cast<int32_t>(std::max_element(normalized.begin(), normalized.end()) - normalized.begin()));
            heads.rows.insert(heads.rows.end(), normalized.begin(), normalized.end());
        }
        cases.push_back(std::move(heads));
    }
    for (const auto& heads : cases) {
        const auto result = harness.accept(heads.tokens, chain_parents(n), vocab, {}, heads.rows);
        std::vector<std::vector<int32_t>> states;
        for (int32_t t = 0; t < n; ++t) states.push_back(top_k_of(heads.rows.data() + t * vocab, vocab, k));
        expect_optimal(result.emitted, states, heads.rows, vocab, q, "V 65536");
    }
    // Cost of one step, for the record (no bound: machines differ).
    const auto start = std::chrono::steady_clock::now();
    const int repeats = 40;
    for (int r = 0; r < repeats; ++r)
        for (const auto& heads : cases) harness.accept(heads.tokens, chain_parents(n), vocab, {}, heads.rows);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "[ info     ] V 65,536, 8 heads, k 3: " << 1e6 * seconds / (repeats * cases.size())
              << " us per accept\n";
}

TEST(ViterbiAcceptor, EmptyTreeIsAnError) {
    std::mt19937_64 rng(3);
    TempDir dir;
    random_dense(rng, 10).save((dir / "q.cdztrn").string());
    AcceptorHarness harness(table(dir / "q.cdztrn", 3));
    try {
        harness.accept({}, {}, 10, {}, {});
        FAIL() << "an empty tree was accepted";
    } catch (const cadenza::Error& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("acceptor.viterbi"), std::string::npos) << message;
        EXPECT_NE(message.find("no nodes"), std::string::npos) << message;
        EXPECT_NE(message.find("head"), std::string::npos) << message;
    }
}

TEST(ViterbiAcceptor, RejectsVocabMismatchNonChainAndMissingDistributions) {
    std::mt19937_64 rng(4);
    TempDir dir;
    const fs::path path = dir / "q.cdztrn";
    random_dense(rng, 10).save(path.string());
    AcceptorHarness harness(table(path, 3, "sample_first = false\n"));
    const Heads heads = random_heads(rng, 2, 12);
    auto message_of = [&](auto&& call) -> std::string {
        try {
            call();
        } catch (const cadenza::Error& error) {
            return error.what();
        }
        return "";
    };
    const std::string mismatch = message_of([&] { harness.accept(heads.tokens, {-1, 0}, 12, {}, heads.rows); });
    EXPECT_NE(mismatch.find(path.string()), std::string::npos) << mismatch;
    EXPECT_NE(mismatch.find("10"), std::string::npos) << mismatch;
    EXPECT_NE(mismatch.find("12"), std::string::npos) << mismatch;

    const Heads fitting = random_heads(rng, 2, 10);
    const std::string tree = message_of([&] { harness.accept(fitting.tokens, {-1, -1}, 10, {}, fitting.rows); });
    EXPECT_NE(tree.find("chain"), std::string::npos) << tree;
    const std::string missing = message_of([&] { harness.accept(fitting.tokens, {-1, 0}, 10, {}, {}); });
    EXPECT_NE(missing.find("draft_probabilities"), std::string::npos) << missing;
    std::vector<float> negative = fitting.rows;
    negative[3] = -0.5f;
    const std::string bad = message_of([&] { harness.accept(fitting.tokens, {-1, 0}, 10, {}, negative); });
    EXPECT_NE(bad.find("not a probability"), std::string::npos) << bad;
    // Still usable after errors.
    EXPECT_EQ(harness.accept(fitting.tokens, {-1, 0}, 10, {}, fitting.rows).emitted.size(), 2u);
}

// ------------------------------------------------------------------------
// The transitions file

std::vector<char> read_bytes(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string load_error(const fs::path& path) {
    try {
        TransitionMatrix::load(path.string());
    } catch (const TransitionFileError& error) {
        return error.what();
    }
    return "";
}

TEST(TransitionFile, RoundTripsDenseAndSparse) {
    std::mt19937_64 rng(8);
    TempDir dir;
    const TransitionMatrix dense = random_dense(rng, 17);
    const TransitionMatrix sparse = random_sparse(rng, 23);
    dense.save((dir / "d.cdztrn").string());
    sparse.save((dir / "s.cdztrn").string());
    const TransitionMatrix d = TransitionMatrix::load((dir / "d.cdztrn").string());
    const TransitionMatrix s = TransitionMatrix::load((dir / "s.cdztrn").string());
    EXPECT_FALSE(d.is_sparse());
    EXPECT_TRUE(s.is_sparse());
    EXPECT_EQ(s.top_n(), sparse.top_n());
    EXPECT_EQ(fs::file_size(dir / "s.cdztrn"), s.file_size());
    for (int32_t i = 0; i < 17; ++i)
        for (int32_t j = 0; j < 17; ++j) EXPECT_EQ(d.probability(i, j), dense.probability(i, j));
    std::vector<int32_t> all(23);
    for (int32_t j = 0; j < 23; ++j) all[j] = j;
    std::vector<float> gathered(23);
    for (int32_t i = 0; i < 23; ++i) {
        s.gather_row(i, all.data(), all.size(), gathered.data());
        const auto row = s.sparse_row(i);
        for (int32_t j = 0; j < 23; ++j) {
            EXPECT_EQ(s.probability(i, j), sparse.probability(i, j));
            EXPECT_EQ(gathered[j], s.probability(i, j));
            if (!std::binary_search(row.ids, row.ids + row.count, j)) EXPECT_EQ(s.probability(i, j), row.floor);
        }
    }
}

TEST(TransitionFile, MalformedFilesGiveClearErrors) {
    std::mt19937_64 rng(9);
    TempDir dir;
    const fs::path good = dir / "good.cdztrn";
    random_dense(rng, 8).save(good.string());
    const std::vector<char> bytes = read_bytes(good);
    const fs::path bad = dir / "bad.cdztrn";
    auto expect_error = [&](const std::vector<char>& content, const std::string& fragment) {
        write_bytes(bad, content);
        const std::string message = load_error(bad);
        EXPECT_NE(message.find(bad.string()), std::string::npos) << "'" << message << "' should name the file";
        EXPECT_NE(message.find(fragment), std::string::npos) << "'" << message << "' should say " << fragment;
    };

    expect_error(std::vector<char>(bytes.begin(), bytes.end() - 5), "truncated");
    expect_error(std::vector<char>(bytes.begin(), bytes.begin() + 30), "truncated");
    std::vector<char> foreign = bytes;
    std::copy_n("RIFF\0\0\0\0", 8, foreign.begin());
    expect_error(foreign, "bad magic");
    std::vector<char> version = bytes;
    version[8] = 2;
    expect_error(version, "unsupported transitions format version 2");
    std::vector<char> trailing = bytes;
    trailing.push_back(0);
    expect_error(trailing, "inconsistent sizes");
    std::vector<char> wrong_vocab = bytes;
    wrong_vocab[16] = 9;  // the header says 9 x 9
    expect_error(wrong_vocab, "inconsistent sizes");
    std::vector<char> row_sum = bytes;
    const float value = 0.9f;  // row 3, column 2
    std::memcpy(row_sum.data() + 64 + (3 * 8 + 2) * 4, &value, 4);
    expect_error(row_sum, "row 3 sums to");

    // Sparse: a token id out of range.
    std::vector<uint64_t> offsets{0, 1, 1, 1};
    const TransitionMatrix sparse =
        TransitionMatrix::make_sparse(3, 1, offsets, {2}, {0.5f}, {0.25f, 1.0f / 3, 1.0f / 3}, {});
    sparse.save(good.string());
    std::vector<char> out_of_range = read_bytes(good);
    const size_t id_at = 64 + 4 * 8 + 3 * 4;
    out_of_range[id_at] = 7;
    expect_error(out_of_range, "row 0 stores token id 7, out of range");
    EXPECT_THROW(TransitionMatrix::make_sparse(3, 1, offsets, {2}, {0.9f}, {0.25f, 1.0f / 3, 1.0f / 3}, {}),
                 TransitionFileError);

    // Through the plugin: creating the acceptor fails, naming the file.
    write_bytes(bad, foreign);
    try {
        AcceptorHarness harness(table(bad, 3));
        FAIL() << "a foreign file was loaded";
    } catch (const cadenza::Error& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find(bad.string()), std::string::npos) << message;
        EXPECT_NE(message.find("bad magic"), std::string::npos) << message;
    }
    write_bytes(bad, row_sum);
    try {
        AcceptorHarness harness(table(bad, 3));
        FAIL() << "a matrix whose row 3 does not sum to 1 was loaded";
    } catch (const cadenza::Error& error) {
        EXPECT_NE(std::string(error.what()).find("row 3 sums to"), std::string::npos) << error.what();
    }
}

// ------------------------------------------------------------------------
// cadenza build-transitions

struct CliRun {
    int exit_code;
    std::string out, err;
};

CliRun run_cli(const std::string& arguments, const TempDir& dir) {
    const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
    const std::string command = std::string("'") + CADENZA_CLI + "' build-transitions " + arguments + " > '" +
                                out.string() + "' 2> '" + err.string() + "'";
    const int status = std::system(command.c_str());
    auto slurp = [](const fs::path& path) {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    };
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

void write_text(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

// Bigram counts of a corpus text, counted here independently of the CLI.
std::map<std::pair<int, int>, uint64_t> count_bigrams(const std::string& corpus, std::vector<uint64_t>& row_totals) {
    std::map<std::pair<int, int>, uint64_t> counts;
    std::istringstream lines(corpus);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream tokens(line);
        int previous = -1, token;
        while (tokens >> token) {
            if (previous >= 0) {
                ++counts[{previous, token}];
                ++row_totals[previous];
            }
            previous = token;
        }
    }
    return counts;
}

TEST(BuildTransitions, DenseProbabilitiesAreTheSmoothedBigramFrequencies) {
    TempDir dir;
    const std::string corpus = "0 1 2 1 2\n\n  3 3\t3 1 \r\n2 1 0 1\n5\n";
    write_text(dir / "corpus.txt", corpus);
    const int vocab = 6;
    const double alpha = 0.5;
    const CliRun run = run_cli("--corpus '" + (dir / "corpus.txt").string() + "' --vocab 6 --alpha 0.5 --output '" +
                                   (dir / "q.cdztrn").string() + "'",
                               dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("4 sequences"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("10 bigrams"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find(" s\n"), std::string::npos) << "the time taken, in seconds: " << run.out;

    const TransitionMatrix q = TransitionMatrix::load((dir / "q.cdztrn").string());
    EXPECT_FALSE(q.is_sparse());
    EXPECT_EQ(q.vocab_size(), vocab);
    EXPECT_EQ(q.provenance().alpha, alpha);
    EXPECT_EQ(q.provenance().sequence_count, 4u);
    EXPECT_EQ(q.provenance().bigram_count, 10u);
    std::vector<uint64_t> totals(vocab, 0);
    const auto counts = count_bigrams(corpus, totals);
    for (int i = 0; i < vocab; ++i)
        for (int j = 0; j < vocab; ++j) {
            const auto found = counts.find({i, j});
            const double c = found == counts.end() ? 0.0 : static_cast<double>(found->second);
            const auto expected = static_cast<float>((c + alpha) / (static_cast<double>(totals[i]) + alpha * vocab));
            EXPECT_EQ(q.probability(i, j), expected) << "Q(" << i << ", " << j << ")";
        }
    // Spot checks by hand: row 1 saw 2, 2, 0 (n = 3); row 4 nothing.
    EXPECT_FLOAT_EQ(q.probability(1, 2), (2 + 0.5f) / (3 + 3.0f));
    EXPECT_FLOAT_EQ(q.probability(4, 0), 1.0f / 6);
}

TEST(BuildTransitions, SparseRowsKeepTheTopNAndAFloor) {
    TempDir dir;
    // Row 3: successors 5 x4, 7 x2, 9 x1. Row 10: 11, 12, 13 once each (a
    // tie: the lower ids win). Row 20: nothing.
    const std::string corpus = "3 5\n3 5\n3 5\n3 5\n3 7\n3 7\n3 9\n10 11\n10 12\n10 13\n20\n";
    write_text(dir / "corpus.txt", corpus);
    const int vocab = 50;
    const double alpha = 0.25;
    const CliRun run = run_cli("--corpus '" + (dir / "corpus.txt").string() +
                                   "' --vocab 50 --alpha 0.25 --sparse-top 2 --output '" +
                                   (dir / "q.cdztrn").string() + "'",
                               dir);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const TransitionMatrix q = TransitionMatrix::load((dir / "q.cdztrn").string());
    ASSERT_TRUE(q.is_sparse());
    EXPECT_EQ(q.top_n(), 2u);

    auto expect_row = [&](int row, std::vector<int32_t> ids, std::vector<double> stored_counts, double total) {
        const auto r = q.sparse_row(row);
        ASSERT_EQ(std::vector<int32_t>(r.ids, r.ids + r.count), ids) << "row " << row;
        const double denominator = total + alpha * vocab;
        double kept = 0.0;
        for (size_t e = 0; e < ids.size(); ++e) {
            EXPECT_EQ(r.probabilities[e], static_cast<float>((stored_counts[e] + alpha) / denominator))
                << "row " << row << ", token " << ids[e];
            kept += stored_counts[e];
        }
        const double unstored = vocab - static_cast<double>(ids.size());
        EXPECT_FLOAT_EQ(r.floor, static_cast<float>((total - kept + alpha * unstored) / (denominator * unstored)))
            << "row " << row;
        double sum = 0.0;
        for (int32_t j = 0; j < vocab; ++j) sum += q.probability(row, j);
        EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
    };
    expect_row(3, {5, 7}, {4, 2}, 7);
    expect_row(10, {11, 12}, {1, 1}, 3);
    expect_row(20, {}, {}, 0);
    EXPECT_FLOAT_EQ(q.probability(20, 33), 1.0f / vocab);
    // Token 9 (seen once) is beyond the top 2: it is in the floor, which
    // therefore holds more than the smoothing alone.
    EXPECT_EQ(q.probability(3, 9), q.sparse_row(3).floor);
    EXPECT_GT(q.sparse_row(3).floor, static_cast<float>(alpha / (7 + alpha * vocab)));
}

TEST(BuildTransitions, ChoosesTheLayoutByVocabularySize) {
    TempDir dir;
    write_text(dir / "corpus.txt", "1 2 3\n");
    const std::string base = "--corpus '" + (dir / "corpus.txt").string() + "' --output '" +
                             (dir / "q.cdztrn").string() + "' --vocab ";
    ASSERT_EQ(run_cli(base + "100", dir).exit_code, 0);
    EXPECT_FALSE(TransitionMatrix::load((dir / "q.cdztrn").string()).is_sparse());
    ASSERT_EQ(run_cli(base + "5000", dir).exit_code, 0);
    const TransitionMatrix q = TransitionMatrix::load((dir / "q.cdztrn").string());
    EXPECT_TRUE(q.is_sparse());
    EXPECT_EQ(q.top_n(), 64u);
}

TEST(BuildTransitions, MalformedCorpusLineExitsOneAndNamesTheLine) {
    TempDir dir;
    const fs::path corpus = dir / "corpus.txt";
    write_text(corpus, "1 2 3\n4 5 6\n7 8x 9\n1 1\n");
    const std::string output = (dir / "q.cdztrn").string();
    CliRun run = run_cli("--corpus '" + corpus.string() + "' --vocab 10 --output '" + output + "'", dir);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(corpus.string() + ":3"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("malformed token '8x'"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(output));

    write_text(corpus, "1 2 3\n4 -5\n");
    run = run_cli("--corpus '" + corpus.string() + "' --vocab 10 --output '" + output + "'", dir);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(corpus.string() + ":2"), std::string::npos) << run.err;

    write_text(corpus, "1 2 3\n4 5\n\n9 10\n");
    run = run_cli("--corpus '" + corpus.string() + "' --vocab 10 --output '" + output + "'", dir);
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_NE(run.err.find(corpus.string() + ":4: token 10 is out of range"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(output));
}

}  // namespace
