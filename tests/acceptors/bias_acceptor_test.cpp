// acceptor.bias (SSD): with beta = 0 it is acceptor.exact output for output
// under the same random stream; a larger beta accepts more drafts.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "acceptor_harness.h"
#include "basic_acceptors_support.h"

namespace cadenza::test::basic {
namespace {

TEST(BiasAcceptor, DescribesItself) {
    const AcceptorHarness harness(table_of("acceptor.bias"));
    EXPECT_EQ(harness.info().verifies, 1);
}

// Random trees, vocabularies, rows (sometimes one-hot, sometimes sparse or
// off from summing to 1, sometimes without draft rows): both plugins, seeded
// alike, must emit the very same tokens call after call.
TEST(BiasAcceptor, BetaZeroMatchesExactOutputForOutput) {
    const AcceptorHarness exact(table_of("acceptor.exact"), 9001);
    const AcceptorHarness bias(table_of("acceptor.bias", "beta = 0.0\n"), 9001);
    const AcceptorHarness relaxed(table_of("acceptor.bias", "beta = 0.3\n"), 9001);
    std::mt19937_64 generator(91);
    int differences_with_relaxed = 0;
    int64_t accepted_total = 0;
    const int cases = 3000;
    for (int c = 0; c < cases; ++c) {
        const int64_t V = std::uniform_int_distribution<int64_t>(1, 16)(generator);
        const int32_t n = std::uniform_int_distribution<int32_t>(0, 10)(generator);
        const std::vector<int32_t> parents = random_shape(n, generator);
        const int kind = std::uniform_int_distribution<int>(0, 3)(generator);
        auto row = [&] {
            std::vector<float> p = dirichlet(V, kind == 1 ? 0.3 : 1.0, generator);
            if (kind == 1)  // sparse: some exact zeros
                for (auto& v : p)
                    if (std::bernoulli_distribution(0.3)(generator)) v = 0.0f;
            if (kind == 2) {  // temperature 0
                const int64_t best = std::uniform_int_distribution<int64_t>(0, V - 1)(generator);
                std::fill(p.begin(), p.end(), 0.0f);
                p[static_cast<size_t>(best)] = 1.0f;
            }
            bool any = false;
            for (float v : p) any = any || v > 0.0f;
            if (!any) p[0] = 1.0f;
            const float scale = std::uniform_real_distribution<float>(0.98f, 1.02f)(generator);
            for (auto& v : p) v *= scale;  // rows off from 1
            return p;
        };
        std::vector<float> target, draft;
        std::vector<int32_t> tokens(static_cast<size_t>(n));
        for (int32_t r = 0; r <= n; ++r) {
            const std::vector<float> p = row();
            target.insert(target.end(), p.begin(), p.end());
        }
        const bool greedy = kind == 3;
        for (int32_t i = 0; i < n; ++i) {
            std::vector<float> q = row();
            uint64_t state = generator();
            tokens[static_cast<size_t>(i)] = std::bernoulli_distribution(0.8)(generator)
                                                 ? sample_from(q, state)
                                                 : std::uniform_int_distribution<int32_t>(0, static_cast<int32_t>(V) - 1)(generator);
            if (!greedy) draft.insert(draft.end(), q.begin(), q.end());
        }
        const AcceptResult a = exact.accept(tokens, parents, V, target, draft);
        const AcceptResult b = bias.accept(tokens, parents, V, target, draft);
        const AcceptResult r = relaxed.accept(tokens, parents, V, target, draft);
        ASSERT_EQ(a.accepted_nodes, b.accepted_nodes) << "case " << c;
        ASSERT_EQ(a.emitted, b.emitted) << "case " << c;
        accepted_total += static_cast<int64_t>(a.accepted_nodes.size());
        differences_with_relaxed += (r.emitted != a.emitted);
    }
    // The cases do exercise acceptance, and a non-zero beta does change outputs.
    EXPECT_GT(accepted_total, cases / 2);
    EXPECT_GT(differences_with_relaxed, 0);
}

TEST(BiasAcceptor, MeanAcceptedLengthRisesWithBeta) {
    // Chains of 4 drafts from a draft that half agrees with the target.
    ToyModel model(12, 97, 1.0, 0.5);
    const std::vector<int32_t> chain = {-1, 0, 1, 2};
    const int steps = 6000;
    std::vector<double> means;
    for (const char* beta : {"0.0", "0.2", "0.4", "0.8"}) {
        const AcceptorHarness harness(table_of("acceptor.bias", std::string("beta = ") + beta + "\n"), 919);
        uint64_t draw_state = 929;  // the same drafts for every beta
        int64_t accepted = 0;
        for (int s = 0; s < steps; ++s) {
            const Step step = draft_step(model, {}, chain, draw_state);
            const AcceptResult result = harness.accept(step.tokens, step.parents, model.vocab(), step.target, step.draft);
            ASSERT_EQ(result.emitted.size(), result.accepted_nodes.size() + 1);
            accepted += static_cast<int64_t>(result.accepted_nodes.size());
        }
        means.push_back(static_cast<double>(accepted) / steps);
        std::cout << "[ bias beta " << beta << " ] mean accepted length " << means.back() << "\n";
    }
    // Each step of beta must add clearly more than the noise (standard error
    // of a mean here is below 0.02).
    for (size_t k = 1; k < means.size(); ++k) EXPECT_GT(means[k], means[k - 1] + 0.1) << "beta step " << k;
    EXPECT_LE(means.back(), 4.0);
}

}  // namespace
}  // namespace cadenza::test::basic
