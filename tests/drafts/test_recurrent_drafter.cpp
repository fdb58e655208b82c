// draft.recurrent on its own: each row is the code-digit head's product
// distribution after the cell has read the pending token and every token
// drafted before it (walked by hand in double precision); the chain stops
// early under stop_probability with its first draws unchanged; draw =
// "argmax" takes each row's most likely token and sends it one-hot; an acceptor
// that does not verify is refused; a file that is not a recurrent draft is
// refused naming the file and why.
#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <string>
#include <vector>

#include "draft_fixtures.h"
#include "error.h"
#include "recurrent_draft.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

std::string recurrent_table(const std::filesystem::path& model, const std::string& extra = "") {
    return "plugin = \"draft.recurrent\"\nmodel = \"" + model.string() + "\"\ntarget = \"" +
           test::draft_models().target.string() + "\"\n" + extra;
}

std::vector<float> random_hidden(uint64_t seed) {
    at::manual_seed(seed);
    const at::Tensor h = at::randn({test::hidden_size}).contiguous();
    return std::vector<float>(h.data_ptr<float>(), h.data_ptr<float>() + test::hidden_size);
}

at::Tensor as_double(const at::Tensor& t) { return t.to(at::kDouble); }

// One step of the cell in double precision from `state` after reading a token with embedding `e`.
at::Tensor cell_step_by_hand(const drafts::RecurrentDraft& draft, const at::Tensor& state, const at::Tensor& e) {
    const at::Tensor pre = at::mv(as_double(draft.state_weight), state) + at::mv(as_double(draft.token_weight), as_double(e)) +
                           as_double(draft.bias);
    return state + at::mv(as_double(draft.out_weight), at::silu(pre));
}

// The synthesis's distribution (allowed tokens only) of log-probabilities `lp` [V].
at::Tensor allowed_distribution(const at::Tensor& lp) {
    at::Tensor allowed = at::full({test::vocab_size}, -INFINITY, at::kDouble);
    allowed.narrow(0, test::audio_begin, test::audio_end - test::audio_begin)
        .copy_(lp.to(at::kDouble).narrow(0, test::audio_begin, test::audio_end - test::audio_begin));
    allowed[test::end_token] = lp.to(at::kDouble)[test::end_token];
    return at::softmax(allowed, 0);
}

TEST(RecurrentDrafter, EachRowIsTheCellsDistributionAfterReadingEveryTokenBeforeIt) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    const drafts::RecurrentDraft draft = drafts::RecurrentDraft::load(models.recurrent, test::vocab_size);
    const std::vector<float> hidden = random_hidden(8);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin drafter(recurrent_table(models.recurrent));
    EXPECT_EQ(drafter.info().max_nodes, 3);  // length 0: the depth it was trained to
    EXPECT_EQ(drafter.info().needs_target_hidden, 1);
    const auto p = drafter.propose(drafter.new_session(), sequence, test::synthesis_sampling(1.0), hidden,
                                   static_cast<int64_t>(sequence.size()) - 2);
    ASSERT_EQ(p.tokens.size(), 3u);
    EXPECT_EQ(p.parents, (std::vector<int32_t>{-1, 0, 1}));

    at::Tensor state = as_double(at::from_blob(const_cast<float*>(hidden.data()), {test::hidden_size}, at::kFloat));
    int32_t read = sequence.back();  // the pending token the target drew from h
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        state = cell_step_by_hand(draft, state, models.target_weights.embed_tokens[read]);
        const at::Tensor head = at::mv(as_double(draft.digit_weight), state) + as_double(draft.digit_bias);
        const at::Tensor expected = allowed_distribution(draft.digits->log_probabilities(head));
        double worst = 0;
        for (int64_t t = 0; t < test::vocab_size; ++t)
            worst = std::max(worst, std::fabs(p.probabilities[i * test::vocab_size + t] - expected[t].item<double>()));
        EXPECT_LT(worst, 1e-5) << "node " << i;
        EXPECT_GT(p.probabilities[i * test::vocab_size + p.tokens[i]], 0.0f) << "node " << i;
        read = p.tokens[i];
    }
}

// Per drafted node, walked by hand in double precision: the code-digit
// head's `count` most likely allowed tokens and the target table's scores of
// them, the cell having read `first` and then each drafted token before the node.
struct ScoredCandidates {
    at::Tensor tokens, scores;
};

std::vector<ScoredCandidates> candidates_by_hand(const drafts::RecurrentDraft& draft, const std::vector<float>& hidden,
                                                 int32_t first, const std::vector<int32_t>& drafted, int64_t count) {
    const auto& models = test::draft_models();
    at::Tensor state = as_double(at::from_blob(const_cast<float*>(hidden.data()), {test::hidden_size}, at::kFloat));
    std::vector<ScoredCandidates> nodes;
    int32_t read = first;
    for (const int32_t token : drafted) {
        state = cell_step_by_hand(draft, state, models.target_weights.embed_tokens[read]);
        const at::Tensor head = at::mv(as_double(draft.digit_weight), state) + as_double(draft.digit_bias);
        const at::Tensor allowed = allowed_distribution(draft.digits->log_probabilities(head));
        const at::Tensor tokens = std::get<1>(allowed.topk(count));
        nodes.push_back({tokens, at::mv(as_double(models.target_weights.lm_head).index_select(0, tokens), state)});
        read = token;
    }
    return nodes;
}

TEST(RecurrentDrafter, CandidatesAreTheHeadsMostLikelyTokensScoredByTheTargetsTable) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    const drafts::RecurrentDraft draft = drafts::RecurrentDraft::load(models.recurrent_table_scored, test::vocab_size);
    ASSERT_TRUE(draft.table_scored);
    const std::vector<float> hidden = random_hidden(12);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    constexpr int64_t count = 8;
    test::DrafterPlugin drafter(recurrent_table(models.recurrent_table_scored, "candidates = 8\n"));
    const double temperature = 0.8;
    const auto p = drafter.propose(drafter.new_session(), sequence, test::synthesis_sampling(temperature), hidden,
                                   static_cast<int64_t>(sequence.size()) - 2);
    ASSERT_EQ(p.tokens.size(), 3u);

    const auto nodes = candidates_by_hand(draft, hidden, sequence.back(), p.tokens, count);
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        ASSERT_EQ(nodes[i].tokens.numel(), count);
        test::expect_candidate_row(p.probabilities.data() + i * test::vocab_size, nodes[i].tokens, nodes[i].scores,
                                   temperature, p.tokens[i], "node " + std::to_string(i));
    }
}

TEST(RecurrentDrafter, DrawArgmaxWithCandidatesTakesTheBestTableScoredCandidate) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    const drafts::RecurrentDraft draft = drafts::RecurrentDraft::load(models.recurrent_table_scored, test::vocab_size);
    const std::vector<float> hidden = random_hidden(13);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin drafter(recurrent_table(models.recurrent_table_scored, "candidates = 8\ndraw = \"argmax\"\n"));
    const auto p = drafter.propose(drafter.new_session(), sequence, test::synthesis_sampling(0.8), hidden,
                                   static_cast<int64_t>(sequence.size()) - 2);
    ASSERT_EQ(p.tokens.size(), 3u);

    const auto nodes = candidates_by_hand(draft, hidden, sequence.back(), p.tokens, 8);
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        EXPECT_EQ(p.tokens[i], nodes[i].tokens[nodes[i].scores.argmax().item<int64_t>()].item<int64_t>()) << "node " << i;
        for (int64_t t = 0; t < test::vocab_size; ++t)
            ASSERT_EQ(p.probabilities[i * test::vocab_size + t], t == p.tokens[i] ? 1.0f : 0.0f) << i << " " << t;
    }
}

TEST(RecurrentDrafter, CandidatesNeedADraftTrainedToBeScoredByTheTable) {
    const auto& models = test::draft_models();
    try {
        test::DrafterPlugin drafter(recurrent_table(models.recurrent, "candidates = 8\n"));
        FAIL() << "a draft without cadenza.candidate_scoring was taken";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("--table-scoring"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(models.recurrent.filename().string()), std::string::npos) << e.what();
    }
}

TEST(RecurrentDrafter, TheRowPathStepsAsTheOperatorsDo) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    drafts::RecurrentDraft draft = drafts::RecurrentDraft::load(models.recurrent, test::vocab_size);
    at::manual_seed(3);
    draft.out_weight = at::randn_like(draft.out_weight) * 0.1;  // a cell that moves the state
    const int64_t hidden = draft.hidden_size();
    const std::vector<float> start = random_hidden(9);
    std::vector<float> state = start, scratch(static_cast<size_t>(draft.row_scratch_size()));
    std::vector<float> logits(static_cast<size_t>(draft.digit_weight.size(0)));
    at::Tensor reference = at::from_blob(const_cast<float*>(start.data()), {hidden}, at::kFloat).clone();
    for (int step = 0; step < 3; ++step) {
        const at::Tensor embedding = at::randn({hidden});
        draft.advance_row(state.data(), embedding.data_ptr<float>(), scratch.data());
        draft.digit_logits_row(state.data(), logits.data());
        reference = draft.advance(reference, embedding);
        const at::Tensor row = at::from_blob(state.data(), {hidden}, at::kFloat);
        EXPECT_LT((row - reference).abs().max().item<double>(), 1e-4) << "step " << step;
        EXPECT_GT((reference - at::from_blob(const_cast<float*>(start.data()), {hidden}, at::kFloat)).abs().max().item<double>(), 1e-2);
        const at::Tensor head = at::from_blob(logits.data(), {draft.digit_weight.size(0)}, at::kFloat);
        EXPECT_LT((head - draft.digit_logits(reference)).abs().max().item<double>(), 1e-4) << "step " << step;
    }
}

TEST(RecurrentDrafter, TheFloat16CellStepsAsTheOperatorsDoOnItsRoundedWeights) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    drafts::RecurrentDraft draft = drafts::RecurrentDraft::load(models.recurrent, test::vocab_size);
    at::manual_seed(3);
    draft.out_weight = at::randn_like(draft.out_weight) * 0.1;
    drafts::RecurrentDraft half = draft;
    half.hold_cell_as_half();
    // The operators on the weights rounded to halves: what the panels hold.
    drafts::RecurrentDraft rounded = draft;
    for (at::Tensor* w : {&rounded.state_weight, &rounded.token_weight, &rounded.out_weight})
        *w = w->to(at::kHalf).to(at::kFloat);
    const int64_t hidden = draft.hidden_size();
    const std::vector<float> start = random_hidden(9);
    std::vector<float> state = start, scratch(static_cast<size_t>(half.row_scratch_size()));
    at::Tensor reference = at::from_blob(const_cast<float*>(start.data()), {hidden}, at::kFloat).clone();
    at::Tensor unrounded = reference.clone();
    double rounding = 0.0;
    for (int step = 0; step < 3; ++step) {
        const at::Tensor embedding = at::randn({hidden});
        half.advance_row(state.data(), embedding.data_ptr<float>(), scratch.data());
        reference = rounded.advance(reference, embedding);
        unrounded = draft.advance(unrounded, embedding);
        const at::Tensor row = at::from_blob(state.data(), {hidden}, at::kFloat);
        EXPECT_LT((row - reference).abs().max().item<double>(), 1e-4) << "step " << step;
        rounding = std::max(rounding, (row - unrounded).abs().max().item<double>());
    }
    EXPECT_GT(rounding, 0.0);   // the weights were rounded...
    EXPECT_LT(rounding, 1e-2);  // ...to halves
}

TEST(RecurrentDrafter, CellPrecisionFloat16ProposesFromItsRows) {
    const auto& models = test::draft_models();
    const std::vector<float> hidden = random_hidden(9);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin half(recurrent_table(models.recurrent, "length = 3\ncell_precision = \"float16\"\n"), 4);
    const auto p = half.propose(half.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
    ASSERT_EQ(p.tokens.size(), 3u);
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        double total = 0.0;
        for (int64_t t = 0; t < test::vocab_size; ++t) total += p.probabilities[i * test::vocab_size + t];
        EXPECT_NEAR(total, 1.0, 1e-4) << "node " << i;
        EXPECT_GT(p.probabilities[i * test::vocab_size + p.tokens[i]], 0.0f) << "node " << i;
    }
    EXPECT_THROW(test::DrafterPlugin(recurrent_table(models.recurrent, "cell_precision = \"float8\"\n"), 4), Error);
}

TEST(RecurrentDrafter, StopProbabilityEndsTheChainAfterAnUnlikelyTokenWithTheSameDraws) {
    const auto& models = test::draft_models();
    const std::vector<float> hidden = random_hidden(9);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin full(recurrent_table(models.recurrent, "length = 3\n"), 4);
    test::DrafterPlugin stopping(recurrent_table(models.recurrent, "length = 3\nstop_probability = 1.0\n"), 4);
    const auto a = full.propose(full.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
    const auto b = stopping.propose(stopping.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
    ASSERT_EQ(a.tokens.size(), 3u);
    ASSERT_EQ(b.tokens.size(), 1u);  // every token has probability below 1
    EXPECT_EQ(b.tokens[0], a.tokens[0]);
}

TEST(RecurrentDrafter, DrawArgmaxTakesEachRowsMostLikelyTokenAndSendsItOneHot) {
    const auto& models = test::draft_models();
    const std::vector<float> hidden = random_hidden(10);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin sampled(recurrent_table(models.recurrent), 4);
    test::DrafterPlugin greedy(recurrent_table(models.recurrent, "draw = \"argmax\"\n"), 4);
    // At temperature 0 both draw the argmax, so the same chain; the rows are one-hot either way.
    const auto cold = sampled.propose(sampled.new_session(), sequence, test::synthesis_sampling(0.0), hidden, 3);
    const auto a = greedy.propose(greedy.new_session(), sequence, test::synthesis_sampling(0.0), hidden, 3);
    EXPECT_EQ(a.tokens, cold.tokens);
    // At temperature 1 the argmax chain reads its own argmax tokens: the first
    // token is the sampled drafter's first row's most likely one.
    const auto warm = sampled.propose(sampled.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
    const auto b = greedy.propose(greedy.new_session(), sequence, test::synthesis_sampling(1.0), hidden, 3);
    ASSERT_EQ(b.tokens.size(), 3u);
    const float* first = warm.probabilities.data();
    EXPECT_EQ(b.tokens[0], static_cast<int32_t>(std::max_element(first, first + test::vocab_size) - first));
    for (size_t i = 0; i < b.tokens.size(); ++i)
        for (int64_t t = 0; t < test::vocab_size; ++t)
            ASSERT_EQ(b.probabilities[i * test::vocab_size + t], t == b.tokens[i] ? 1.0f : 0.0f) << i << " " << t;
}

TEST(RecurrentDrafter, WithoutAPendingTokenToReadItRefusesAndSaysWhy) {
    const auto& models = test::draft_models();
    test::DrafterPlugin drafter(recurrent_table(models.recurrent));
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    try {
        drafter.propose(drafter.new_session(), sequence, test::synthesis_sampling(1.0), random_hidden(1), 4);
        FAIL() << "a hidden state at the last position was taken";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("needs an acceptor that verifies"), std::string::npos) << e.what();
    }
    // No hidden state yet (a one-token prompt): an empty proposal.
    const auto empty = drafter.propose(drafter.new_session(), {test::audio_start}, test::synthesis_sampling(1.0));
    EXPECT_TRUE(empty.tokens.empty());
}

TEST(RecurrentDrafter, AFileThatIsNotARecurrentDraftIsRefusedNamingItAndWhy) {
    const auto& models = test::draft_models();
    auto expect_error = [&](const std::filesystem::path& file, const std::string& fragment) {
        try {
            test::DrafterPlugin drafter(recurrent_table(file));
            FAIL() << fragment;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
        }
    };
    expect_error(models.heads_digits, "not a recurrent draft (metadata cadenza.kind is 'mtp', expected 'recurrent')");
    expect_error(models.directory / "missing.safetensors", "missing.safetensors");
}

}  // namespace
}  // namespace cadenza
