// The bench's ceiling (cli/bench_report.cpp) on hand-made costs and stats,
// against the formula worked out by hand, and the costs of several rounds
// made one (cli/bench_costs.cpp).
#include <gtest/gtest.h>

#include "bench_costs.h"
#include "bench_report.h"

namespace cadenza::cli {
namespace {

Engine::CostProfile costs_1_3_5() {
    Engine::CostProfile costs;
    costs.sizes = {1, 3, 5};
    costs.verify_seconds = {1.0e-3, 1.2e-3, 1.4e-3};
    return costs;
}

PipelineRun plain_run(int64_t tokens, double loop_seconds) {
    PipelineRun run;
    run.name = "plain";
    for (int64_t i = 0; i < tokens; ++i) run.stats.record_step(0, 0, 0, 1);
    run.stats.loop_seconds = loop_seconds;
    run.costs = costs_1_3_5();
    return run;
}

PipelineRun chain_run(const std::vector<int32_t>& depths, int32_t tokens_per_step, double prefill_seconds) {
    PipelineRun run;
    run.name = "chain";
    run.has_drafter = true;
    for (int32_t depth : depths) run.stats.record_step(depth, depth, tokens_per_step - 1, tokens_per_step);
    run.stats.prefill_seconds = prefill_seconds;
    run.costs = costs_1_3_5();
    run.costs.draft_level_seconds = 0.1e-3;
    run.costs.draft_depth = 4;
    run.costs.draft_nodes = 4;
    run.costs.step_size = 5;
    run.costs.step_after_proposal_seconds = 1.54e-3;  // 1.1 x cost(5)
    return run;
}

TEST(BenchFigures, PlainDecodingHasACeilingOfOne) {
    const PipelineRun plain = plain_run(300, 0.3);
    const PipelineFigures f = compute_figures(plain, plain);
    EXPECT_DOUBLE_EQ(f.ceiling, 1.0);
    EXPECT_DOUBLE_EQ(f.realized, 1.0);
}

TEST(BenchFigures, CeilingCountsThePrefillAndThePassAfterAProposal) {
    // 100 steps of 3 tokens after a 4-level chain; 0.06 s of prefill over 300
    // tokens is p = 0.2 one-token passes per token. D = 1.4 x 1.1 + 4 x 0.1.
    PipelineRun run = chain_run(std::vector<int32_t>(100, 4), 3, 0.06);
    run.stats.loop_seconds = 0.2;
    const PipelineFigures f = compute_figures(run, plain_run(300, 0.3));
    const double d = 1.4 * 1.1 + 4 * 0.1;
    EXPECT_NEAR(f.pass_after_proposal_ratio, 1.1, 1e-12);
    EXPECT_NEAR(f.verify_relative_cost, 1.4 * 1.1, 1e-12);
    EXPECT_NEAR(f.draft_relative_cost, 0.1, 1e-12);
    EXPECT_NEAR(f.prefill_per_token, 0.2, 1e-12);
    EXPECT_NEAR(f.decode_ceiling, 3.0 / d, 1e-12);
    EXPECT_NEAR(f.ceiling, 1.2 / (0.2 + d / 3.0), 1e-12);
    EXPECT_NEAR(f.speedup, 1.5, 1e-12);
    EXPECT_NEAR(f.realized, 1.5 / f.ceiling, 1e-12);
}

TEST(BenchFigures, TheLoopsProposalsAreTimedApartFromEachSynthesisFirst) {
    // Two syntheses, 100 proposals: their first two took 4 ms in all (the
    // drafter read the prompts), the other 98 took 49 ms.
    PipelineRun run = chain_run(std::vector<int32_t>(100, 4), 3, 0.0);
    run.stats.loop_seconds = 0.2;
    for (int i = 0; i < 100; ++i) run.stats.add_draft_pass();
    run.stats.add_first_draft_pass(0.001);
    run.stats.add_first_draft_pass(0.003);
    run.stats.draft_seconds = 0.049 + 0.004;
    const PipelineFigures f = compute_figures(run, plain_run(300, 0.3));
    EXPECT_NEAR(f.proposal_ms, 0.5, 1e-12);
    EXPECT_NEAR(f.first_proposal_ms, 2.0, 1e-12);
    // The firsts' 4 ms beyond two proposals of 0.5 ms, 3 ms over 300 tokens of
    // 1 ms passes, is q = 0.01 passes per token, in the ceiling beside p = 0.
    const double d = 1.4 * 1.1 + 4 * 0.1;
    EXPECT_NEAR(f.draft_prompt_per_token, 0.01, 1e-12);
    EXPECT_NEAR(f.ceiling, 1.0 / (0.01 + d / 3.0), 1e-12);
    EXPECT_NEAR(f.decode_ceiling, 3.0 / d, 1e-12);
    // A first proposal no dearer than the others leaves q at 0.
    run.stats = DecodingStats{};
    for (int i = 0; i < 100; ++i) run.stats.record_step(4, 4, 2, 3);
    for (int i = 0; i < 100; ++i) run.stats.add_draft_pass();
    run.stats.add_first_draft_pass(0.0004);
    run.stats.draft_seconds = 0.05;
    run.stats.loop_seconds = 0.2;
    EXPECT_EQ(compute_figures(run, plain_run(300, 0.3)).draft_prompt_per_token, 0.0);
}

TEST(BenchFigures, DynamicLengthCostsTheLevelsAndNodesTheLoopDrafted) {
    // Chains of 2 and 4 in turn: 3 levels and 3 nodes per step, so the pass
    // verifies 4 tokens (1.3 ms between the sizes 3 and 5) and 3 levels are
    // drafted, not the maximum of 4.
    std::vector<int32_t> depths;
    for (int i = 0; i < 50; ++i) depths.insert(depths.end(), {2, 4});
    PipelineRun run = chain_run(depths, 2, 0.0);
    run.stats.loop_seconds = 0.1;
    const PipelineFigures f = compute_figures(run, plain_run(200, 0.2));
    EXPECT_NEAR(f.draft_depth_per_step, 3.0, 1e-12);
    EXPECT_NEAR(f.draft_nodes_per_step, 3.0, 1e-12);
    EXPECT_NEAR(f.verify_relative_cost, 1.3 * 1.1, 1e-12);
    EXPECT_NEAR(f.ceiling, 2.0 / (1.3 * 1.1 + 3 * 0.1), 1e-12);
}

TEST(BenchFigures, ThePassAfterAProposalIsAgainstTheSamePassTimedInTurnsWithIt) {
    // cost(5) from the sizes' turns is 1.4 ms; the same pass timed in turns
    // with the one after a proposal 1.6 ms (the machine slower then), after
    // a proposal 1.76 ms: the ratio is 1.1, and D = 1.4 x 1.1 + 4 x 0.1.
    PipelineRun run = chain_run(std::vector<int32_t>(100, 4), 3, 0.0);
    run.costs.step_alone_in_turns_seconds = 1.6e-3;
    run.costs.step_after_proposal_seconds = 1.76e-3;
    run.stats.loop_seconds = 0.2;
    const PipelineFigures f = compute_figures(run, plain_run(300, 0.3));
    EXPECT_NEAR(f.pass_after_proposal_ratio, 1.1, 1e-12);
    EXPECT_NEAR(f.verify_relative_cost, 1.4 * 1.1, 1e-12);
    EXPECT_NEAR(f.ceiling, 3.0 / (1.4 * 1.1 + 4 * 0.1), 1e-12);
}

TEST(BenchFigures, StepsOfDifferentSizesPayTheMeanOfTheirCosts) {
    // A cost curve that is not linear: 3 tokens cost less than 2 and 4 on
    // average. Steps of 1 and 3 nodes in turn evaluate 2 and 4 tokens: the
    // pass costs (1.15 + 1.31) / 2 = 1.23, not cost(3) = 1.13.
    std::vector<int32_t> depths;
    for (int i = 0; i < 50; ++i) depths.insert(depths.end(), {1, 3});
    PipelineRun run = chain_run(depths, 2, 0.0);
    run.costs.sizes = {1, 2, 3, 4, 5};
    run.costs.verify_seconds = {1.0e-3, 1.15e-3, 1.13e-3, 1.31e-3, 1.27e-3};
    run.costs.step_after_proposal_seconds = 1.27e-3;  // ratio 1
    run.stats.loop_seconds = 0.1;
    const PipelineFigures f = compute_figures(run, plain_run(200, 0.2));
    EXPECT_NEAR(f.draft_nodes_per_step, 2.0, 1e-12);
    EXPECT_NEAR(f.verify_relative_cost, 1.23, 1e-12);
    EXPECT_NEAR(f.ceiling, 2.0 / (1.23 + 2 * 0.1), 1e-12);
}

TEST(BenchFigures, NotVerifyingEvaluatesTheTokensItEmitted) {
    PipelineRun run = chain_run(std::vector<int32_t>(100, 4), 4, 0.0);
    run.verifies = false;
    run.costs.step_size = 4;
    run.costs.step_after_proposal_seconds = 1.3e-3;  // cost(4) interpolated: ratio 1
    run.stats.loop_seconds = 0.2;
    const PipelineFigures f = compute_figures(run, plain_run(400, 0.4));
    EXPECT_NEAR(f.pass_after_proposal_ratio, 1.0, 1e-12);
    EXPECT_NEAR(f.verify_relative_cost, 1.3, 1e-12);
    EXPECT_NEAR(f.ceiling, 4.0 / (1.3 + 4 * 0.1), 1e-12);
}

// A round of costs: one token, the step's 5 tokens, a proposal of 4 levels,
// and the step's pass after a proposal and alone in turns.
Engine::CostProfile round_of(double one, double five, double level, double after, double alone) {
    Engine::CostProfile costs;
    costs.sizes = {1, 5};
    costs.verify_seconds = {one, five};
    costs.draft_level_seconds = level;
    costs.draft_seconds = 4 * level;
    costs.draft_levels = 4;
    costs.step_size = 5;
    costs.step_after_proposal_seconds = after;
    costs.step_alone_in_turns_seconds = alone;
    costs.context_length = 300;
    return costs;
}

// The step costs 1.3 one-token passes in two rounds of three and 1.0 in the
// other, whose one-token pass was slowest: the median of the rounds' ratios
// is 1.3. Medians taken size by size would give 1.5 / 1.2 = 1.25, dividing
// one round's step by another's one-token pass.
TEST(BenchCosts, RoundsAreMadeOneByTheMedianOfEachRoundsRatios) {
    const std::vector<Engine::CostProfile> rounds{round_of(1.0e-3, 1.3e-3, 0.03e-3, 1.43e-3, 1.3e-3),
                                                  round_of(1.5e-3, 1.5e-3, 0.03e-3, 1.65e-3, 1.5e-3),
                                                  round_of(1.2e-3, 1.56e-3, 0.06e-3, 1.56e-3, 1.56e-3)};
    const Engine::CostProfile costs = median_costs(rounds);
    ASSERT_EQ(costs.sizes, (std::vector<int>{1, 5}));
    EXPECT_DOUBLE_EQ(costs.verify_seconds[0], 1.2e-3);  // the median one-token pass
    EXPECT_NEAR(costs.verify_seconds[1] / costs.verify_seconds[0], 1.3, 1e-12);
    // Levels: 0.03, 0.02 and 0.05 one-token passes; the median 0.03.
    EXPECT_NEAR(costs.draft_level_seconds / costs.verify_seconds[0], 0.03, 1e-12);
    EXPECT_NEAR(costs.draft_seconds / costs.verify_seconds[0], 0.12, 1e-12);
    // After a proposal over alone: 1.1, 1.1 and 1.0; the median 1.1.
    EXPECT_NEAR(costs.step_after_proposal_seconds / costs.step_alone_in_turns_seconds, 1.1, 1e-12);
    EXPECT_DOUBLE_EQ(costs.draft_levels, 4);
    EXPECT_EQ(costs.context_length, 300);
}

TEST(BenchCosts, OneRoundIsItself) {
    const Engine::CostProfile round = round_of(1.1e-3, 1.4e-3, 0.04e-3, 1.5e-3, 1.45e-3);
    const Engine::CostProfile costs = median_costs({round});
    EXPECT_DOUBLE_EQ(costs.verify_seconds[0], round.verify_seconds[0]);
    EXPECT_NEAR(costs.verify_seconds[1], round.verify_seconds[1], 1e-15);
    EXPECT_NEAR(costs.draft_level_seconds, round.draft_level_seconds, 1e-15);
    EXPECT_NEAR(costs.step_after_proposal_seconds, round.step_after_proposal_seconds, 1e-15);
    EXPECT_TRUE(median_costs({}).sizes.empty());
}

}  // namespace
}  // namespace cadenza::cli
