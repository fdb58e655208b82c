// acceptor.exact: the emitted tokens follow the target's distribution (first
// token and first two, on chains, on trees of i.i.d. siblings and with greedy
// drafts), with either verification (token by token, or a chain as a block),
// the chi-square tests are strong enough to catch wrong rules, and at
// temperature 0 the rule is argmax matching.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "acceptor_harness.h"
#include "basic_acceptors_support.h"

namespace cadenza::test::basic {
namespace {

constexpr int64_t vocab = 8;
// Runs of the plugins; the demonstrations that wrong rules fail need fewer
// (the wrong rules score 10-1000 times the critical value).
constexpr int64_t samples = 60000;
constexpr int64_t demonstration_samples = 30000;
constexpr int64_t tree_demonstration_samples = 15000;  // trees cost more to draft
const std::vector<int32_t> chain_shape = {-1, 0};
const std::vector<int32_t> long_chain_shape = {-1, 0, 1};
const std::string block_verification = "verification = \"block\"\n";
// Three root children drawn i.i.d. from q, each with two children.
const std::vector<int32_t> tree_shape = {-1, -1, -1, 0, 0, 1, 1, 2, 2};

// A reference implementation of speculative sampling in the test, with the
// two classic mistakes as options, to show the chi-square tests catch them.
enum class Rule {
    exact,
    correction_from_target,     // on rejection, resample from p instead of norm(max(0, p - q))
    no_residual_between_siblings,  // judge every sibling against p; residual only for the correction
    residual_not_cumulative        // each rejection sets r = norm(max(0, p - q)) from p, not from r
};

// Row `row` of rows [*, V], divided by its sum, in double.
std::vector<double> normalized_row(const std::vector<float>& rows, int64_t V, int64_t row) {
    std::vector<double> p(rows.begin() + row * V, rows.begin() + (row + 1) * V);
    double total = 0.0;
    for (double v : p) total += v;
    for (double& v : p) v /= total;
    return p;
}

int32_t draw_from(const std::vector<double>& p, std::mt19937_64& generator) {
    std::discrete_distribution<int32_t> distribution(p.begin(), p.end());
    return distribution(generator);
}

AcceptResult reference_accept(const Step& step, int64_t V, std::mt19937_64& generator, Rule rule) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const int32_t n = static_cast<int32_t>(step.tokens.size());
    auto normalized = [&](const std::vector<float>& rows, int64_t row) { return normalized_row(rows, V, row); };
    auto residual_of = [&](const std::vector<double>& r, const std::vector<double>& q) {
        std::vector<double> next(r.size());
        double total = 0.0;
        for (size_t i = 0; i < r.size(); ++i) total += (next[i] = std::max(0.0, r[i] - q[i]));
        if (total <= 0.0) return r;
        for (double& v : next) v /= total;
        return next;
    };
    auto sample = [&](const std::vector<double>& p) { return draw_from(p, generator); };
    AcceptResult result;
    int32_t current = -1;
    for (;;) {
        const std::vector<double> p = normalized(step.target, current + 1);
        std::vector<double> r = p, last_q;
        int32_t accepted = -1;
        for (int32_t child = current + 1; child < n && accepted < 0; ++child) {
            if (step.parents[child] != current) continue;
            const int32_t x = step.tokens[child];
            std::vector<double> q(static_cast<size_t>(V), 0.0);
            if (step.draft.empty()) q[static_cast<size_t>(x)] = 1.0;
            else q = normalized(step.draft, child);
            const double a = q[x] > 0.0 ? std::min(1.0, r[x] / q[x]) : 1.0;
            if (uniform(generator) < a) accepted = child;
            else if (rule == Rule::no_residual_between_siblings) last_q = q;
            else if (rule == Rule::residual_not_cumulative) r = residual_of(p, q);
            else r = residual_of(r, q);
        }
        if (accepted < 0) {
            if (rule == Rule::correction_from_target) r = p;
            if (rule == Rule::no_residual_between_siblings && !last_q.empty()) r = residual_of(p, last_q);
            result.emitted.push_back(sample(r));
            return result;
        }
        result.accepted_nodes.push_back(accepted);
        result.emitted.push_back(step.tokens[static_cast<size_t>(accepted)]);
        current = accepted;
    }
}

AcceptFunction reference(Rule rule, uint64_t seed) {
    auto generator = std::make_shared<std::mt19937_64>(seed);
    return [generator, rule](const Step& step, int64_t V) { return reference_accept(step, V, *generator, rule); };
}

// A reference of block verification (the rule in exact_acceptor.cpp's
// header) in the test, with one mistake as an option: stopping before the
// end of the chain with probability w_i instead of h_i.
AcceptResult reference_block(const Step& step, int64_t V, std::mt19937_64& generator, bool stop_by_weight) {
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const auto g = static_cast<int32_t>(step.tokens.size());
    auto row = [&](const std::vector<float>& rows, int64_t r) { return normalized_row(rows, V, r); };
    auto draft = [&](int32_t i) {
        if (!step.draft.empty()) return row(step.draft, i);
        std::vector<double> q(static_cast<size_t>(V), 0.0);
        q[static_cast<size_t>(step.tokens[i])] = 1.0;
        return q;
    };
    auto residual = [&](double w, int32_t i) {  // max(0, w P_{i+1} - Q_{i+1})
        const std::vector<double> p = row(step.target, i), q = draft(i);
        std::vector<double> r(p.size());
        for (size_t x = 0; x < p.size(); ++x) r[x] = std::max(0.0, w * p[x] - q[x]);
        return r;
    };
    auto sample = [&](const std::vector<double>& p) { return draw_from(p, generator); };
    std::vector<double> w(static_cast<size_t>(g) + 1, 1.0);
    for (int32_t i = 0; i < g; ++i) {
        const int32_t x = step.tokens[i];
        const double p = row(step.target, i)[x], q = draft(i)[x];
        w[i + 1] = q > 0.0 ? std::min(1.0, w[i] * p / q) : (p > 0.0 && w[i] > 0.0 ? 1.0 : 0.0);
    }
    AcceptResult result;
    auto emit_chain = [&](int32_t count) {
        for (int32_t i = 0; i < count; ++i) {
            result.accepted_nodes.push_back(i);
            result.emitted.push_back(step.tokens[i]);
        }
    };
    if (uniform(generator) < w[g]) {
        emit_chain(g);
        result.emitted.push_back(sample(row(step.target, g)));
        return result;
    }
    for (int32_t tau = g - 1; tau >= 1; --tau) {
        const std::vector<double> r = residual(w[tau], tau);
        double s = 0.0;
        for (double v : r) s += v;
        const double h = stop_by_weight ? w[tau] : (s > 0.0 ? s / (s + 1.0 - w[tau]) : 0.0);
        if (uniform(generator) < h && s > 0.0) {
            emit_chain(tau);
            result.emitted.push_back(sample(r));
            return result;
        }
    }
    const std::vector<double> r = residual(1.0, 0);
    double s = 0.0;
    for (double v : r) s += v;
    result.emitted.push_back(sample(s > 0.0 ? r : row(step.target, 0)));
    return result;
}

AcceptFunction reference_block_rule(bool stop_by_weight, uint64_t seed) {
    auto generator = std::make_shared<std::mt19937_64>(seed);
    return [generator, stop_by_weight](const Step& step, int64_t V) {
        return reference_block(step, V, *generator, stop_by_weight);
    };
}

struct Verdict {
    ChiSquare first, pair;
    double mean_accepted;
};

Verdict judge(ToyModel& model, const std::vector<int32_t>& shape, const AcceptFunction& accept, uint64_t draw_seed,
              bool greedy = false, int64_t runs = samples) {
    const FirstTwoCounts counts = count_first_two(model, shape, accept, runs, draw_seed, greedy);
    return {chi_square_test(counts.first, expected_first(model)), chi_square_test(counts.pair, expected_pair(model)),
            counts.mean_accepted};
}

TEST(ExactAcceptor, DescribesItself) {
    const AcceptorHarness harness(table_of("acceptor.exact"));
    EXPECT_EQ(harness.info().verifies, 1);
}

TEST(ExactAcceptor, ChainKeepsTargetDistribution) {
    ToyModel model(vocab, 11);
    const AcceptorHarness harness(table_of("acceptor.exact"), 101);
    const Verdict verdict = judge(model, chain_shape, through(harness), 1001);
    RecordProperty("first_chi2", std::to_string(verdict.first.statistic));
    RecordProperty("pair_chi2", std::to_string(verdict.pair.statistic));
    EXPECT_TRUE(verdict.first.passes()) << "first token: " << verdict.first;
    EXPECT_TRUE(verdict.pair.passes()) << "first two tokens: " << verdict.pair;
    EXPECT_GT(verdict.mean_accepted, 0.2);  // drafts do get accepted: the path is exercised
    std::cout << "[ exact chain ] first " << verdict.first << "; pair " << verdict.pair
              << "; mean accepted " << verdict.mean_accepted << "\n";
}

TEST(ExactAcceptor, ChiSquareCatchesWrongRulesOnChain) {
    ToyModel model(vocab, 11);
    // The reference implementation of the right rule passes...
    const Verdict right = judge(model, chain_shape, reference(Rule::exact, 5), 1001, false, demonstration_samples);
    EXPECT_TRUE(right.first.passes()) << right.first;
    EXPECT_TRUE(right.pair.passes()) << right.pair;
    // ...resampling the correction from p instead of the residual fails...
    const Verdict wrong = judge(model, chain_shape, reference(Rule::correction_from_target, 5), 1001, false, demonstration_samples);
    EXPECT_FALSE(wrong.first.passes()) << wrong.first;
    EXPECT_FALSE(wrong.pair.passes()) << wrong.pair;
    // ...and so does SSD's relaxation with beta = 0.5.
    const AcceptorHarness bias(table_of("acceptor.bias", "beta = 0.5\n"), 101);
    const Verdict biased = judge(model, chain_shape, through(bias), 1001, false, demonstration_samples);
    EXPECT_FALSE(biased.first.passes()) << biased.first;
    EXPECT_FALSE(biased.pair.passes()) << biased.pair;
    std::cout << "[ chain, reference exact ] first " << right.first << "; pair " << right.pair << "\n"
              << "[ chain, correction from p ] first " << wrong.first << "; pair " << wrong.pair << "\n"
              << "[ chain, acceptor.bias beta 0.5 ] first " << biased.first << "; pair " << biased.pair << "\n";
}

TEST(ExactAcceptor, TreeOfIidSiblingsKeepsTargetDistribution) {
    ToyModel model(vocab, 23);
    const AcceptorHarness harness(table_of("acceptor.exact"), 202);
    const Verdict verdict = judge(model, tree_shape, through(harness), 2002);
    EXPECT_TRUE(verdict.first.passes()) << "first token: " << verdict.first;
    EXPECT_TRUE(verdict.pair.passes()) << "first two tokens: " << verdict.pair;
    std::cout << "[ exact tree ] first " << verdict.first << "; pair " << verdict.pair << "; mean accepted "
              << verdict.mean_accepted << "\n";
}

TEST(ExactAcceptor, ChiSquareCatchesWrongSiblingResiduals) {
    ToyModel model(vocab, 23);
    const Verdict right = judge(model, tree_shape, reference(Rule::exact, 7), 2002, false, tree_demonstration_samples);
    EXPECT_TRUE(right.first.passes()) << right.first;
    EXPECT_TRUE(right.pair.passes()) << right.pair;
    const Verdict wrong = judge(model, tree_shape, reference(Rule::no_residual_between_siblings, 7), 2002, false,
                                 tree_demonstration_samples);
    EXPECT_FALSE(wrong.first.passes()) << wrong.first;
    EXPECT_FALSE(wrong.pair.passes()) << wrong.pair;
    const Verdict stale = judge(model, tree_shape, reference(Rule::residual_not_cumulative, 7), 2002, false,
                                tree_demonstration_samples);
    EXPECT_FALSE(stale.first.passes()) << stale.first;
    EXPECT_FALSE(stale.pair.passes()) << stale.pair;
    std::cout << "[ tree, reference exact ] first " << right.first << "; pair " << right.pair << "\n"
              << "[ tree, no residual between siblings ] first " << wrong.first << "; pair " << wrong.pair << "\n"
              << "[ tree, residual not cumulative ] first " << stale.first << "; pair " << stale.pair << "\n";
}

TEST(ExactAcceptor, BlockVerificationKeepsTargetDistributionAndKeepsMore) {
    for (const auto& shape : {chain_shape, long_chain_shape}) {
        ToyModel model(vocab, 13);
        const AcceptorHarness token(table_of("acceptor.exact"), 111);
        const AcceptorHarness block(table_of("acceptor.exact", block_verification), 111);
        const Verdict by_token = judge(model, shape, through(token), 1101);
        const Verdict by_block = judge(model, shape, through(block), 1101);
        EXPECT_TRUE(by_block.first.passes()) << "first token: " << by_block.first;
        EXPECT_TRUE(by_block.pair.passes()) << "first two tokens: " << by_block.pair;
        // Optimal in expectation: on this model it keeps 5-10% more (the
        // standard error of either mean is about 0.004).
        EXPECT_GT(by_block.mean_accepted, by_token.mean_accepted + 0.02);
        std::cout << "[ exact chain of " << shape.size() << ", block ] first " << by_block.first << "; pair "
                  << by_block.pair << "; mean accepted " << by_block.mean_accepted << " (token by token "
                  << by_token.mean_accepted << ")\n";
    }
}

TEST(ExactAcceptor, ChiSquareCatchesAWrongBlockRule) {
    ToyModel model(vocab, 13);
    const Verdict right = judge(model, long_chain_shape, reference_block_rule(false, 9), 1101, false,
                                demonstration_samples);
    EXPECT_TRUE(right.first.passes()) << right.first;
    EXPECT_TRUE(right.pair.passes()) << right.pair;
    const Verdict wrong = judge(model, long_chain_shape, reference_block_rule(true, 9), 1101, false,
                                demonstration_samples);
    EXPECT_FALSE(wrong.pair.passes()) << wrong.pair;
    std::cout << "[ chain, reference block ] first " << right.first << "; pair " << right.pair << "\n"
              << "[ chain, block stopping by weight ] first " << wrong.first << "; pair " << wrong.pair << "\n";
}

TEST(ExactAcceptor, BlockVerificationOfGreedyDraftsKeepsTargetDistribution) {
    ToyModel model(vocab, 31);
    const AcceptorHarness harness(table_of("acceptor.exact", block_verification), 313);
    const Verdict verdict = judge(model, long_chain_shape, through(harness), 3103, /*greedy=*/true);
    EXPECT_TRUE(verdict.first.passes()) << "first token: " << verdict.first;
    EXPECT_TRUE(verdict.pair.passes()) << "first two tokens: " << verdict.pair;
}

TEST(ExactAcceptor, BlockVerificationWalksTreesTokenByToken) {
    ToyModel model(vocab, 23);
    const AcceptorHarness token(table_of("acceptor.exact"), 222);
    const AcceptorHarness block(table_of("acceptor.exact", block_verification), 222);
    uint64_t draw_state = 2202;
    for (int s = 0; s < 300; ++s) {
        const Step step = draft_step(model, {}, tree_shape, draw_state);
        const AcceptResult a = token.accept(step.tokens, step.parents, vocab, step.target, step.draft);
        const AcceptResult b = block.accept(step.tokens, step.parents, vocab, step.target, step.draft);
        ASSERT_EQ(a.accepted_nodes, b.accepted_nodes) << "step " << s;
        ASSERT_EQ(a.emitted, b.emitted) << "step " << s;
    }
}

TEST(ExactAcceptor, GreedyDraftsWithoutProbabilitiesKeepTargetDistribution) {
    // Top-3 distinct tokens of q at the root, top-2 below each, no draft rows:
    // q is one-hot, so the residual removes each rejected token in turn.
    ToyModel model(vocab, 31);
    const AcceptorHarness harness(table_of("acceptor.exact"), 303);
    const Verdict verdict = judge(model, tree_shape, through(harness), 3003, /*greedy=*/true);
    EXPECT_TRUE(verdict.first.passes()) << "first token: " << verdict.first;
    EXPECT_TRUE(verdict.pair.passes()) << "first two tokens: " << verdict.pair;
    std::cout << "[ exact greedy tree ] first " << verdict.first << "; pair " << verdict.pair << "\n";
}

TEST(ExactAcceptor, EmptyTreeSamplesRowZero) {
    ToyModel model(vocab, 41);
    const AcceptorHarness harness(table_of("acceptor.exact"), 404);
    std::vector<int64_t> counts(static_cast<size_t>(vocab), 0);
    for (int s = 0; s < 20000; ++s) {
        const AcceptResult result = harness.accept({}, {}, vocab, model.target({}), {});
        ASSERT_EQ(result.emitted.size(), 1u);
        ASSERT_TRUE(result.accepted_nodes.empty());
        ++counts[static_cast<size_t>(result.emitted[0])];
    }
    const ChiSquare chi = chi_square_test(counts, expected_first(model));
    EXPECT_TRUE(chi.passes()) << chi;
}

TEST(ExactAcceptor, TemperatureZeroIsArgmaxMatchingOnHandMadeTrees) {
    struct Case {
        std::vector<int32_t> tokens, parents, argmax;  // argmax per target row
        std::vector<int32_t> accepted, emitted;
    };
    const int64_t V = 5;
    const std::vector<Case> cases = {
        // The first root child misses, the second matches, then its child; bonus after it.
        {{2, 3, 1, 4, 0}, {-1, -1, 0, 1, 2}, {3, 1, 4, 0, 2, 1}, {1, 3}, {3, 4, 2}},
        // The first draft misses: the target's argmax alone.
        {{1, 2}, {-1, 0}, {4, 0, 0}, {}, {4}},
        // Duplicate siblings: the first matching one is taken even if the other goes deeper.
        {{0, 1, 1, 3}, {-1, 0, 0, 2}, {0, 1, 2, 3, 4}, {0, 1}, {0, 1, 2}},
        // A full chain: every draft matches, then the bonus.
        {{4, 3, 2}, {-1, 0, 1}, {4, 3, 2, 1}, {0, 1, 2}, {4, 3, 2, 1}},
    };
    const AcceptorHarness harness(table_of("acceptor.exact"), 505);
    std::mt19937_64 generator(55);
    for (size_t c = 0; c < cases.size(); ++c) {
        const Case& test = cases[c];
        const std::vector<float> target = one_hot_rows(test.argmax, V);
        const AcceptResult expected = argmax_walk(test.tokens, test.parents, test.argmax);
        ASSERT_EQ(expected.accepted_nodes, test.accepted) << "case " << c << " is written wrong";
        ASSERT_EQ(expected.emitted, test.emitted) << "case " << c << " is written wrong";
        for (int repeat = 0; repeat < 50; ++repeat) {
            // Any draft rows (random, giving the drafted tokens some mass) and none at all.
            std::vector<float> draft;
            for (size_t i = 0; i < test.tokens.size(); ++i) {
                std::vector<float> q = dirichlet(V, 0.7, generator);
                q[static_cast<size_t>(test.tokens[i])] += 0.05f;
                draft.insert(draft.end(), q.begin(), q.end());
            }
            for (const auto& rows : {draft, std::vector<float>{}}) {
                const AcceptResult result = harness.accept(test.tokens, test.parents, V, target, rows);
                EXPECT_EQ(result.accepted_nodes, test.accepted) << "case " << c;
                EXPECT_EQ(result.emitted, test.emitted) << "case " << c;
            }
        }
    }
}

// At temperature 0 (one-hot target rows) the acceptor keeps the drafts
// equal to the argmax and emits the argmax after them, on random trees (or
// chains), with random draft rows and without any; `match` of the drafts
// are the argmax of the row they are judged against.
void expect_argmax_matching(const AcceptorHarness& harness, std::mt19937_64& generator, bool chains, double match) {
    for (int c = 0; c < 500; ++c) {
        const int64_t V = std::uniform_int_distribution<int64_t>(2, 12)(generator);
        const int32_t n = std::uniform_int_distribution<int32_t>(chains ? 1 : 0, chains ? 8 : 12)(generator);
        std::vector<int32_t> parents = random_shape(n, generator);
        if (chains)
            for (int32_t i = 0; i < n; ++i) parents[static_cast<size_t>(i)] = i - 1;
        std::vector<int32_t> argmax(static_cast<size_t>(n) + 1), tokens(static_cast<size_t>(n));
        for (auto& a : argmax) a = std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(V) - 1)(generator);
        for (int32_t i = 0; i < n; ++i)
            tokens[static_cast<size_t>(i)] =
                std::bernoulli_distribution(match)(generator)
                    ? argmax[static_cast<size_t>(parents[static_cast<size_t>(i)] + 1)]
                    : std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(V) - 1)(generator);
        std::vector<float> draft;
        for (int32_t i = 0; i < n; ++i) {
            const std::vector<float> q = dirichlet(V, 1.0, generator);
            draft.insert(draft.end(), q.begin(), q.end());
        }
        const AcceptResult expected = argmax_walk(tokens, parents, argmax);
        for (const auto& rows : {draft, std::vector<float>{}}) {
            const AcceptResult result = harness.accept(tokens, parents, V, one_hot_rows(argmax, V), rows);
            ASSERT_EQ(result.accepted_nodes, expected.accepted_nodes) << "case " << c;
            ASSERT_EQ(result.emitted, expected.emitted) << "case " << c;
        }
    }
}

TEST(ExactAcceptor, TemperatureZeroIsArgmaxMatchingOnRandomTrees) {
    const AcceptorHarness harness(table_of("acceptor.exact"), 606);
    std::mt19937_64 generator(66);
    expect_argmax_matching(harness, generator, /*chains=*/false, 0.5);
}

TEST(ExactAcceptor, BlockVerificationAtTemperatureZeroIsArgmaxMatchingOnChains) {
    const AcceptorHarness harness(table_of("acceptor.exact", block_verification), 616);
    std::mt19937_64 generator(67);
    expect_argmax_matching(harness, generator, /*chains=*/true, 0.7);
}

TEST(ExactAcceptor, SameSeedReproducesTheRun) {
    ToyModel model(vocab, 71);
    AcceptorHarness harness(table_of("acceptor.exact"), 707);
    auto run = [&] {
        std::vector<int32_t> emitted;
        uint64_t draw_state = 77;
        for (int s = 0; s < 200; ++s) {
            const AcceptResult result =
                through(harness)(draft_step(model, {}, tree_shape, draw_state), vocab);
            emitted.insert(emitted.end(), result.emitted.begin(), result.emitted.end());
        }
        return emitted;
    };
    const std::vector<int32_t> first = run();
    harness.reseed(707);
    EXPECT_EQ(run(), first);
    harness.reseed(708);
    EXPECT_NE(run(), first);
}

}  // namespace
}  // namespace cadenza::test::basic
