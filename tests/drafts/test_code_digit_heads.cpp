// Code-digit heads: the product distribution against its definition, the
// one-row form against the batched one, the likelihood and the teacher's
// cross-entropy without vocabulary-wide rows, the grid's validation,
// draft.mtp on a code-digit heads file, draft.shallow on a draft with a
// code-digit head, and draft.shallow on the target with a `digit_head` file
// whose best tokens its own table scores (`candidates`).
#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "code_digit_head.h"
#include "draft_fixtures.h"
#include "error.h"
#include "hidden_state_heads.h"
#include "llama_model.h"
#include "panel_weights.h"
#include "row_combinations.h"
#include "safetensors.h"
#include "sampling.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

using drafts::CodeDigitDistribution;
using drafts::CodeGrid;

// 24 codes (levels 3, 4, 2) from token 5 of 32: 5 tokens before the codes, 3 after.
CodeGrid small_grid() { return CodeGrid::parse("3,4,2", 5, 32, "test"); }

TEST(CodeDigitHead, LogProbabilitiesAreTheNormalizedProductOfClassAndDigits) {
    const CodeDigitDistribution distribution(small_grid());
    const CodeGrid& g = distribution.grid();
    EXPECT_EQ(g.code_count(), 24);
    EXPECT_EQ(g.class_count(), 9);
    EXPECT_EQ(g.head_rows(), 9 + 9);
    at::manual_seed(1);
    const at::Tensor logits = at::randn({4, g.head_rows()}, at::kDouble) * 2;
    const at::Tensor lp = distribution.log_probabilities(logits);
    ASSERT_EQ(lp.sizes(), (at::IntArrayRef{4, 32}));
    EXPECT_LT(at::logsumexp(lp, -1).abs().max().item<double>(), 1e-12);
    for (int64_t r = 0; r < 4; ++r) {
        const at::Tensor classes = at::log_softmax(logits[r].narrow(0, 0, 9), 0);
        const at::Tensor d0 = at::log_softmax(logits[r].narrow(0, 9, 3), 0);
        const at::Tensor d1 = at::log_softmax(logits[r].narrow(0, 12, 4), 0);
        const at::Tensor d2 = at::log_softmax(logits[r].narrow(0, 16, 2), 0);
        for (int64_t t = 0; t < 32; ++t) {
            double expected;
            if (t < 5) {
                expected = classes[t].item<double>();
            } else if (t >= 29) {
                expected = classes[t - 24].item<double>();
            } else {
                const int64_t c = t - 5;
                expected = classes[8].item<double>() + d0[c % 3].item<double>() + d1[(c / 3) % 4].item<double>() +
                           d2[c / 12].item<double>();
            }
            EXPECT_NEAR(lp[r][t].item<double>(), expected, 1e-12) << "row " << r << " token " << t;
        }
    }
}

TEST(CodeDigitHead, OneRowMatchesTheBatchedForm) {
    const CodeDigitDistribution distribution(CodeGrid::parse("8,8,8,4,4", 58, 8252, "test"));
    at::manual_seed(2);
    const at::Tensor logits = (at::randn({distribution.grid().head_rows()}) * 3).contiguous();
    const at::Tensor expected = distribution.log_probabilities(logits.to(at::kDouble));
    std::vector<float> out(8252, std::nanf("")), scratch(static_cast<size_t>(distribution.grid().head_rows()));
    distribution.fill_log_probabilities(logits.data_ptr<float>(), out.data(), scratch.data());
    double worst = 0;
    for (int64_t t = 0; t < 8252; ++t)
        worst = std::max(worst, std::fabs(static_cast<double>(out[static_cast<size_t>(t)]) - expected[t].item<double>()));
    EXPECT_LT(worst, 1e-4);  // float against double, logits of magnitude ~10
}

TEST(CodeDigitHead, LikelihoodAndTeacherCrossEntropyNeedNoVocabularyRows) {
    const CodeDigitDistribution distribution(small_grid());
    at::manual_seed(3);
    const at::Tensor logits = at::randn({6, distribution.grid().head_rows()}, at::kDouble);
    const at::Tensor labels = at::tensor({0, 4, 5, 17, 28, 31}, at::kLong);  // before, codes (first, middle, last), after
    const at::Tensor lp = distribution.log_probabilities(logits);
    const at::Tensor expected = -lp.gather(1, labels.unsqueeze(1)).squeeze(1);
    EXPECT_LT((distribution.negative_log_likelihood(logits, labels) - expected).abs().max().item<double>(), 1e-12);

    const at::Tensor teacher = at::softmax(at::randn({6, 32}, at::kDouble) * 2, -1);
    const at::Tensor marginals = distribution.marginals(teacher);
    EXPECT_LT((marginals.narrow(1, 0, 9).sum(1) - 1).abs().max().item<double>(), 1e-12);
    EXPECT_LT((marginals.narrow(1, 9, 3).sum(1) - teacher.narrow(1, 5, 24).sum(1)).abs().max().item<double>(), 1e-12);
    const at::Tensor cross_entropy = -(teacher * lp).sum(1);
    EXPECT_LT((distribution.cross_entropy(logits, marginals) - cross_entropy).abs().max().item<double>(), 1e-12);
}

// One factor under the sampling settings, by definition: tempered softmax
// over the allowed entries, the k most likely, then the smallest prefix
// reaching top_p, renormalized.
std::vector<double> reference_factor(const at::Tensor& logits, const std::vector<bool>& allowed, const cdz_sampling& s) {
    const auto n = static_cast<size_t>(logits.size(0));
    std::vector<double> p(n, 0.0);
    std::vector<size_t> order;
    for (size_t i = 0; i < n; ++i)
        if (allowed[i]) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return logits[static_cast<int64_t>(a)].item<double>() > logits[static_cast<int64_t>(b)].item<double>();
    });
    double sum = 0;
    for (size_t i : order) sum += p[i] = std::exp(logits[static_cast<int64_t>(i)].item<double>() / s.temperature);
    for (size_t i : order) p[i] /= sum;
    size_t kept = s.top_k > 0 ? std::min<size_t>(order.size(), static_cast<size_t>(s.top_k)) : order.size();
    double mass = 0;
    for (size_t r = 0; r < kept; ++r)
        if ((mass += p[order[r]]) >= s.top_p) {
            kept = r + 1;
            break;
        }
    double kept_mass = 0;
    for (size_t r = 0; r < kept; ++r) kept_mass += p[order[r]];
    std::vector<double> out(n, 0.0);
    for (size_t r = 0; r < kept; ++r) out[order[r]] = p[order[r]] / kept_mass;
    return out;
}

TEST(CodeDigitHead, DraftProbabilitiesApplyTheSamplingSettingsFactorByFactor) {
    const CodeDigitDistribution distribution(small_grid());
    std::vector<float> scratch(static_cast<size_t>(distribution.grid().head_rows())), out(32);
    at::manual_seed(5);
    for (int trial = 0; trial < 20; ++trial) {
        const at::Tensor logits = (at::randn({distribution.grid().head_rows()}) * 2).contiguous();
        cdz_sampling s{};
        s.struct_size = sizeof(s);
        s.temperature = trial % 2 ? 0.7 : 1.3;
        s.top_k = trial % 3 == 0 ? 2 : 0;
        s.top_p = trial % 4 == 0 ? 1.0 : 0.6;
        s.allowed_begin = 5;  // the codes and token 30 (after them), as a synthesis allows its codes and end token
        s.allowed_end = 29;
        s.allowed_extra = 30;
        ASSERT_TRUE(distribution.fill_probabilities(logits.data_ptr<float>(), s, out.data(), scratch.data()));
        std::vector<bool> classes(9, false);
        classes[6] = true;  // token 30 is the second token after the codes: class 5 + 1
        classes[8] = true;  // a code
        // The whole row's temperature: the class "a code" carries the digits'
        // tempered normalizers, T * sum_d [lse(l_d / T) - lse(l_d) / T].
        at::Tensor class_logits = logits.narrow(0, 0, 9).clone();
        double carried = 0.0;
        for (const auto& [begin, level] : std::vector<std::pair<int64_t, int64_t>>{{9, 3}, {12, 4}, {16, 2}}) {
            const at::Tensor digit = logits.narrow(0, begin, level).to(at::kDouble);
            carried += (digit / s.temperature).logsumexp(0).item<double>() -
                       digit.logsumexp(0).item<double>() / s.temperature;
        }
        class_logits[8] += s.temperature * carried;
        const auto c = reference_factor(class_logits, classes, s);
        const auto d0 = reference_factor(logits.narrow(0, 9, 3), std::vector<bool>(3, true), s);
        const auto d1 = reference_factor(logits.narrow(0, 12, 4), std::vector<bool>(4, true), s);
        const auto d2 = reference_factor(logits.narrow(0, 16, 2), std::vector<bool>(2, true), s);
        double total = 0;
        for (int64_t t = 0; t < 32; ++t) {
            double expected = 0;
            if (t == 30) expected = c[6];
            if (t >= 5 && t < 29) {
                const int64_t code = t - 5;
                expected = c[8] * d0[static_cast<size_t>(code % 3)] * d1[static_cast<size_t>((code / 3) % 4)] *
                           d2[static_cast<size_t>(code / 12)];
            }
            EXPECT_NEAR(out[static_cast<size_t>(t)], expected, 1e-6) << "trial " << trial << ", token " << t;
            total += out[static_cast<size_t>(t)];
        }
        EXPECT_NEAR(total, 1.0, 1e-5);
    }
    // Greedy: one-hot at the argmax of the product.
    const at::Tensor logits = at::randn({distribution.grid().head_rows()}).contiguous();
    cdz_sampling greedy{};
    greedy.struct_size = sizeof(greedy);
    greedy.top_p = 1.0;
    ASSERT_TRUE(distribution.fill_probabilities(logits.data_ptr<float>(), greedy, out.data(), scratch.data()));
    const at::Tensor lp = distribution.log_probabilities(logits);
    EXPECT_EQ(out[static_cast<size_t>(lp.argmax().item<int64_t>())], 1.0f);
    // Allowed tokens that cut through the codes: the caller samples the whole row instead.
    cdz_sampling partial = greedy;
    partial.allowed_begin = 10;
    partial.allowed_end = 20;
    partial.allowed_extra = -1;
    EXPECT_FALSE(distribution.fill_probabilities(logits.data_ptr<float>(), partial, out.data(), scratch.data()));
}

TEST(CodeDigitHead, MostLikelyIsTheRowsFirstArgmaxWithoutWritingTheRow) {
    // The small grid and en-small's (8,8,8,4,4 after 58 text slots, 8,252 tokens).
    const CodeDigitDistribution small(small_grid());
    const CodeDigitDistribution large(CodeGrid::parse("8,8,8,4,4", 58, 8252, "test"));
    at::manual_seed(11);
    int fast = 0, trials = 0;
    for (const CodeDigitDistribution* distribution : {&small, &large}) {
        const CodeGrid& grid = distribution->grid();
        std::vector<float> scratch(static_cast<size_t>(grid.head_rows())), row(static_cast<size_t>(grid.vocab_size));
        for (int trial = 0; trial < 200; ++trial, ++trials) {
            at::Tensor logits = (at::randn({grid.head_rows()}) * (trial % 3 == 0 ? 6.0 : 1.5)).contiguous();
            if (trial % 10 == 9) {  // a tie within a digit, and between a non-code class and the rest
                float* values = logits.data_ptr<float>();
                values[grid.class_count() + 1] = values[grid.class_count()];
            }
            cdz_sampling s{};
            s.struct_size = sizeof(s);
            s.temperature = trial % 5 == 4 ? 0.0 : (trial % 2 ? 0.7 : 1.3);
            s.top_k = trial % 3 == 1 ? 2 : 0;
            s.top_p = trial % 4 == 0 ? 1.0 : 0.6;
            if (trial % 2) {  // the codes and the token after them, as a synthesis allows
                s.allowed_begin = grid.code_offset;
                s.allowed_end = grid.code_offset + grid.code_count();
                s.allowed_extra = grid.code_offset + grid.code_count() + 1;
            }
            ASSERT_TRUE(distribution->fill_probabilities(logits.data_ptr<float>(), s, row.data(), scratch.data()));
            const int64_t expected = std::max_element(row.begin(), row.end()) - row.begin();
            int64_t token = -1;
            float probability = 0.0f;
            if (!distribution->most_likely(logits.data_ptr<float>(), s, scratch.data(), &token, &probability)) continue;
            ++fast;
            EXPECT_EQ(token, expected) << "grid " << grid.levels_text() << ", trial " << trial;
            EXPECT_EQ(probability, row[static_cast<size_t>(expected)]) << "grid " << grid.levels_text() << ", trial " << trial;
        }
    }
    // The ties and near-ties fall back to the row; the rest do not.
    EXPECT_GT(fast, trials * 3 / 4);
    // The rule whose row is rescaled afterwards always falls back.
    CodeDigitDistribution nucleus(small_grid());
    nucleus.set_sampling(drafts::DigitSampling::nucleus);
    std::vector<float> scratch(static_cast<size_t>(nucleus.grid().head_rows()));
    const at::Tensor logits = at::randn({nucleus.grid().head_rows()}).contiguous();
    cdz_sampling s{};
    s.struct_size = sizeof(s);
    s.temperature = 0.7;
    s.top_p = 0.9;
    int64_t token = -1;
    float probability = 0.0f;
    EXPECT_FALSE(nucleus.most_likely(logits.data_ptr<float>(), s, scratch.data(), &token, &probability));
}

TEST(CodeDigitHead, MostLikelyTokensAreTheRowsLargestAllowedEntries) {
    const CodeDigitDistribution small(small_grid());
    const CodeDigitDistribution large(CodeGrid::parse("8,8,8,4,4", 58, 8252, "test"));
    at::manual_seed(12);
    drafts::TokenBeam beam;
    std::vector<int32_t> tokens;
    for (const CodeDigitDistribution* distribution : {&small, &large}) {
        const CodeGrid& grid = distribution->grid();
        std::vector<float> scratch(static_cast<size_t>(grid.head_rows())), row(static_cast<size_t>(grid.vocab_size));
        for (int trial = 0; trial < 60; ++trial) {
            at::Tensor logits = (at::randn({grid.head_rows()}) * (trial % 3 == 0 ? 6.0 : 1.5)).contiguous();
            if (trial % 10 == 9) {  // a tie within a digit
                float* values = logits.data_ptr<float>();
                values[grid.class_count() + 1] = values[grid.class_count()];
            }
            cdz_sampling s{};
            s.struct_size = sizeof(s);
            s.temperature = 0.7;
            s.top_p = 1.0;
            s.allowed_extra = -1;
            const int kind = trial % 3;
            if (kind == 1) {  // the codes and the token after them, as a synthesis allows: the beam
                s.allowed_begin = grid.code_offset;
                s.allowed_end = grid.code_offset + grid.code_count();
                s.allowed_extra = grid.code_offset + grid.code_count() + 1;
            } else if (kind == 2) {  // part of the codes: the row
                s.allowed_begin = grid.code_offset + 3;
                s.allowed_end = grid.code_offset + grid.code_count() / 2;
            }
            distribution->fill_log_probabilities(logits.data_ptr<float>(), row.data(), scratch.data());
            std::vector<int32_t> order;
            for (int64_t t = 0; t < grid.vocab_size; ++t)
                if (s.allowed_end == 0 || (t >= s.allowed_begin && t < s.allowed_end) || t == s.allowed_extra)
                    order.push_back(static_cast<int32_t>(t));
            std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return row[a] > row[b]; });
            for (const int64_t count : {int64_t{1}, int64_t{5}, int64_t{64}, grid.vocab_size + 3}) {
                std::vector<int32_t> expected(order.begin(),
                                              order.begin() + std::min<int64_t>(count, static_cast<int64_t>(order.size())));
                std::sort(expected.begin(), expected.end());
                distribution->most_likely_tokens(logits.data_ptr<float>(), &s, count, tokens, beam);
                EXPECT_EQ(tokens, expected) << "grid " << grid.levels_text() << ", trial " << trial << ", count " << count;
            }
        }
    }
}

TEST(CodeDigitHead, GridErrorsNameWhereAndWhy) {
    auto expect_error = [](const std::string& levels, int64_t offset, const std::string& fragment) {
        try {
            CodeGrid::parse(levels, offset, 32, "heads.safetensors");
            FAIL() << levels;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("heads.safetensors"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    expect_error("8,x", 0, "each level");
    expect_error("1,4", 0, "each level");
    expect_error("", 0, "no level");
    expect_error("8,8", 0, "more codes than");
    expect_error("4,4", 20, "do not fit");
    EXPECT_EQ(CodeGrid::parse("4,4", 16, 32, "x").other_count(), 16);
}

// The largest difference between a drafter's row [vocab] and the product
// distribution log_probabilities `lp` restricted to what a synthesis allows
// (the codes and the end token), at temperature 1.
double difference_to_synthesis_distribution(const float* row, const at::Tensor& lp) {
    const at::Tensor log_p = lp.to(at::kDouble);
    at::Tensor allowed = at::full({test::vocab_size}, -INFINITY, at::kDouble);
    allowed.narrow(0, test::audio_begin, test::audio_end - test::audio_begin)
        .copy_(log_p.narrow(0, test::audio_begin, test::audio_end - test::audio_begin));
    allowed[test::end_token] = log_p[test::end_token];
    const at::Tensor expected = at::softmax(allowed, 0);
    double worst = 0;
    for (int64_t t = 0; t < test::vocab_size; ++t)
        worst = std::max(worst, std::fabs(row[t] - expected[t].item<double>()));
    return worst;
}

std::string mtp_digit_table(const std::filesystem::path& heads) {
    return "plugin = \"draft.mtp\"\nheads = \"" + heads.string() + "\"\ntarget = \"" +
           test::draft_models().target.string() + "\"\n";
}

TEST(CodeDigitHead, MtpDraftRowsAreTheProductDistributionOfEachHead) {
    c10::InferenceMode inference;
    const auto directory = test::fresh_directory("code-digit-heads");
    const auto& file = test::draft_models().heads_digits;
    const drafts::DraftHeads heads(file, test::draft_models().target);
    ASSERT_NE(heads.code_digits(), nullptr);
    EXPECT_EQ(heads.code_digits()->grid().levels_text(), "2,31");

    at::manual_seed(8);
    const at::Tensor h = at::randn({test::hidden_size}).contiguous();
    const std::vector<float> hidden(h.data_ptr<float>(), h.data_ptr<float>() + test::hidden_size);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    test::DrafterPlugin mtp(mtp_digit_table(file));
    const auto p = mtp.propose(mtp.new_session(), sequence, test::synthesis_sampling(1.0), hidden,
                               static_cast<int64_t>(sequence.size()) - 2);
    ASSERT_EQ(p.tokens.size(), 4u);
    const safetensors::File raw(file);
    for (int64_t i = 0; i < 4; ++i) {
        const std::string prefix = "heads." + std::to_string(i);
        auto tensor = [&](const std::string& name, at::IntArrayRef shape) {
            std::vector<float> v = raw.read_f32(prefix + name);
            return at::from_blob(v.data(), shape, at::kFloat).clone().to(at::kDouble);
        };
        const at::Tensor hd = h.to(at::kDouble);
        const at::Tensor state = hd + at::silu(at::mv(tensor(".linear.weight", {64, 64}), hd) + tensor(".linear.bias", {64}));
        const int64_t rows = heads.code_digits()->grid().head_rows();
        const at::Tensor head_logits =
            at::mv(tensor(".digits.weight", {rows, 64}), state) + tensor(".digits.bias", {rows});
        const at::Tensor lp = heads.code_digits()->log_probabilities(head_logits);
        EXPECT_LT(difference_to_synthesis_distribution(p.probabilities.data() + i * test::vocab_size, lp), 1e-5)
            << "head " << i;
        // head_logits (build-tree's path) agrees with the drafter's rows.
        const at::Tensor from_states = heads.head_logits(i, heads.states(h.unsqueeze(0), i, 1).squeeze(1))[0];
        EXPECT_LT((from_states.to(at::kDouble) - lp).abs().max().item<double>(), 1e-4) << "head " << i;
    }
}

// digit_sampling = "row": the drafter's row is the host's sampling of the
// product's vocabulary row (the target's nucleus rule), which under top-p
// differs from the factor-by-factor nucleus of "factors"; "nucleus" gives
// row's distribution from tempered factors and the host's sampling_nucleus;
// "tempered" the product through the temperature alone, uncut.
TEST(CodeDigitHead, WithRowDigitSamplingTheDraftRowIsTheHostsNucleusOfTheProduct) {
    c10::InferenceMode inference;
    const auto& file = test::draft_models().heads_digits;
    const drafts::DraftHeads heads(file, test::draft_models().target);
    at::manual_seed(9);
    const at::Tensor h = (at::randn({test::hidden_size}) * 3).contiguous();
    const std::vector<float> hidden(h.data_ptr<float>(), h.data_ptr<float>() + test::hidden_size);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    cdz_sampling sampling = test::synthesis_sampling(0.8);
    sampling.top_p = 0.5;
    auto rows_with = [&](const std::string& rule) {
        test::DrafterPlugin mtp(mtp_digit_table(file) + "digit_sampling = \"" + rule + "\"\n");
        return mtp.propose(mtp.new_session(), sequence, sampling, hidden, static_cast<int64_t>(sequence.size()) - 2)
            .probabilities;
    };
    const std::vector<float> row = rows_with("row"), factors = rows_with("factors"), nucleus = rows_with("nucleus"),
                             tempered = rows_with("tempered");
    cdz_sampling temperature_only = sampling;
    temperature_only.top_p = 1.0;
    double largest_difference = 0;
    int64_t cut = 0;
    for (int64_t i = 0; i < 4; ++i) {
        // The head's log q over the vocabulary (build-tree's path).
        const at::Tensor lp = heads.head_logits(i, heads.states(h.unsqueeze(0), i, 1).squeeze(1))[0].contiguous();
        std::vector<float> expected(static_cast<size_t>(test::vocab_size));
        std::vector<float> expected_uncut(expected.size());
        sampling_probabilities(sampling, lp.data_ptr<float>(), expected.data(), test::vocab_size);
        sampling_probabilities(temperature_only, lp.data_ptr<float>(), expected_uncut.data(), test::vocab_size);
        for (int64_t t = 0; t < test::vocab_size; ++t) {
            const size_t at_t = static_cast<size_t>(i * test::vocab_size + t);
            EXPECT_NEAR(row[at_t], expected[static_cast<size_t>(t)], 2e-5) << "head " << i << ", token " << t;
            EXPECT_NEAR(nucleus[at_t], expected[static_cast<size_t>(t)], 2e-5) << "nucleus, head " << i << ", token " << t;
            EXPECT_NEAR(tempered[at_t], expected_uncut[static_cast<size_t>(t)], 2e-5)
                << "tempered, head " << i << ", token " << t;
            largest_difference = std::max(largest_difference, static_cast<double>(std::fabs(row[at_t] - factors[at_t])));
            cut += expected[static_cast<size_t>(t)] == 0 && expected_uncut[static_cast<size_t>(t)] > 0;
        }
    }
    EXPECT_GT(largest_difference, 0.01);
    EXPECT_GT(cut, 0) << "top-p cut nothing, so tempered and nucleus were not told apart";
}

// DraftHeads::pack_panels: float32 panels give the row-major step's rows
// (another order of the same sums); float16 panels give, on the target's
// head, exactly float32 panels of the head rounded to float16, and rows near
// but not equal to float32's. A Step filled again (a drafter keeps one per
// session) holds what a fresh one would, whatever it held before.
TEST(CodeDigitHead, PanelStepsAgreeWithTheRowMajorStepAndAReusedStepWithAFreshOne) {
    c10::InferenceMode inference;
    const auto& file = test::draft_models().heads_digits;
    const drafts::DraftHeads plain(file, test::draft_models().target);
    drafts::DraftHeads single(file, test::draft_models().target), half(file, test::draft_models().target);
    if (!single.pack_panels(llama::PanelPrecision::float32)) GTEST_SKIP() << "no vectorized kernel on this CPU";
    ASSERT_TRUE(half.pack_panels(llama::PanelPrecision::float16));
    EXPECT_THROW(half.pack_panels(llama::PanelPrecision::int8), sdk::Error);

    at::manual_seed(12);
    const at::Tensor h = (at::randn({test::hidden_size}) * 2).contiguous(), h2 = at::randn({test::hidden_size});
    const float* x = h.data_ptr<float>();
    const cdz_sampling sampling = test::synthesis_sampling(1.0);
    const drafts::TokenRange tokens = drafts::allowed_tokens(&sampling, test::vocab_size);
    ASSERT_EQ(tokens.begin, test::audio_begin);
    ASSERT_EQ(tokens.extra, test::end_token);

    drafts::DraftHeads::Step a = plain.step(x, true, 3, tokens), b = single.step(x, true, 3, tokens),
                             c = half.step(x, true, 3, tokens);
    // The base row: the target's head on h, over the allowed tokens.
    const at::Tensor rounded = plain.lm_head().to(at::kHalf).to(at::kFloat).contiguous();
    const llama::PanelMatrix rounded_panels = llama::PanelMatrix::pack(rounded);
    std::vector<float> expected(static_cast<size_t>(test::vocab_size));
    llama::combine_panels(x, 1, test::hidden_size, rounded_panels, nullptr, expected.data(), test::vocab_size);
    int64_t half_differs = 0;
    for (int64_t t = 0; t < test::vocab_size; ++t) {
        if (!tokens.contains(t)) continue;
        EXPECT_NEAR(b.logits(0)[t], a.logits(0)[t], 1e-4) << "token " << t;
        EXPECT_EQ(c.logits(0)[t], expected[static_cast<size_t>(t)]) << "token " << t;
        half_differs += c.logits(0)[t] != a.logits(0)[t];
    }
    EXPECT_GT(half_differs, 0) << "the float16 panels gave float32's rows";
    // The heads' rows (their linears through the panels).
    double largest_half_difference = 0;
    for (int64_t r = 1; r < 4; ++r)
        for (int64_t t = 0; t < test::vocab_size; ++t) {
            if (!tokens.contains(t)) continue;
            EXPECT_NEAR(b.logits(r)[t], a.logits(r)[t], 1e-4) << "row " << r << ", token " << t;
            EXPECT_NEAR(c.logits(r)[t], a.logits(r)[t], 5e-2) << "row " << r << ", token " << t;
            largest_half_difference = std::max(largest_half_difference, std::fabs(double(c.logits(r)[t]) - a.logits(r)[t]));
        }
    EXPECT_GT(largest_half_difference, 0.0);

    // One Step filled three times, each against a fresh one: 1 + 3 rows, 4
    // verifying rows, then a lone base row (no digit rows left over).
    drafts::DraftHeads::Step reused;
    const std::vector<std::tuple<const float*, bool, int64_t>> calls = {
        {x, true, 3}, {h2.data_ptr<float>(), false, 4}, {x, true, 0}};
    for (const auto& [state, base, n] : calls) {
        half.step(state, base, n, tokens, reused);
        drafts::DraftHeads::Step fresh = half.step(state, base, n, tokens);
        ASSERT_EQ(reused.rows(), fresh.rows());
        for (int64_t r = 0; r < fresh.rows(); ++r)
            for (int64_t t = 0; t < test::vocab_size; ++t)
                if (tokens.contains(t)) ASSERT_EQ(reused.logits(r)[t], fresh.logits(r)[t]) << "n = " << n << ", row " << r;
    }
}

// draft.mtp's `weights`: float16 rows within a rounding of float32's; a
// value not among the choices is an error naming the key and the choices.
TEST(CodeDigitHead, MtpWeightsInFloat16ProposeNearFloat32sRowsAndOtherValuesAreErrors) {
    c10::InferenceMode inference;
    const auto& file = test::draft_models().heads_digits;
    at::manual_seed(13);
    const at::Tensor h = at::randn({test::hidden_size}).contiguous();
    const std::vector<float> hidden(h.data_ptr<float>(), h.data_ptr<float>() + test::hidden_size);
    const std::vector<int32_t> sequence = {10, 11, test::audio_start, 270, 271};
    auto rows_with = [&](const std::string& weights) {
        test::DrafterPlugin mtp(mtp_digit_table(file) + "weights = \"" + weights + "\"\n");
        return mtp.propose(mtp.new_session(), sequence, test::synthesis_sampling(1.0), hidden,
                           static_cast<int64_t>(sequence.size()) - 1)
            .probabilities;
    };
    const std::vector<float> single = rows_with("float32"), half = rows_with("float16");
    ASSERT_EQ(single.size(), half.size());
    double largest = 0;
    for (size_t i = 0; i < single.size(); ++i) largest = std::max(largest, std::fabs(double(single[i]) - half[i]));
    EXPECT_LT(largest, 1e-2);
    try {
        test::DrafterPlugin mtp(mtp_digit_table(file) + "weights = \"bfloat16\"\n");
        FAIL() << "weights = bfloat16 was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'weights'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("float16"), std::string::npos) << e.what();
    }
}

TEST(CodeDigitHead, HeadsFileErrorsNameTheFileAndTheKey) {
    const auto directory = test::fresh_directory("code-digit-heads-bad");
    auto expect_error = [&](const std::filesystem::path& file, const std::string& fragment) {
        try {
            test::DrafterPlugin mtp(mtp_digit_table(file));
            FAIL() << fragment;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(file.filename().string()), std::string::npos) << e.what();
        }
    };
    test::write_code_digit_heads(directory / "digits.safetensors", test::draft_models().target_weights.lm_head, 1, "digits");
    expect_error(directory / "digits.safetensors", "cadenza.output = 'digits'");
    // Levels whose codes do not fit: 4 x 31 codes from token 258 of 320.
    {
        const auto& file = test::draft_models().heads_digits;
        safetensors::File original(file);
        safetensors::Writer writer;
        std::map<std::string, std::vector<float>> kept;
        for (const auto& info : original.tensors()) {
            kept[info.name] = original.read_f32(info.name);
            writer.add_f32(info.name, info.shape, kept[info.name].data());
        }
        for (const auto& [key, value] : original.metadata()) writer.set_metadata(key, value);
        writer.set_metadata("cadenza.code_levels", "4,31");
        writer.write(directory / "wide.safetensors");
        expect_error(directory / "wide.safetensors", "do not fit");
    }
    // A digits tensor missing.
    {
        safetensors::Writer writer;
        std::vector<float> w(64 * 64, 0.0f), b(64, 0.0f);
        writer.add_f32("heads.0.linear.weight", {64, 64}, w.data());
        writer.add_f32("heads.0.linear.bias", {64}, b.data());
        writer.set_metadata("cadenza.output", "code_digits");
        writer.set_metadata("cadenza.code_levels", "2,31");
        writer.set_metadata("cadenza.code_offset", "258");
        writer.write(directory / "no-digits.safetensors");
        expect_error(directory / "no-digits.safetensors", "heads.0.digits.weight");
    }
}

TEST(CodeDigitHead, ShallowDraftRowsAreTheProductDistributionAfterEachToken) {
    c10::InferenceMode inference;
    const auto& directory = test::draft_models().draft_digits;
    const llama::LlamaModel reference(
        llama::LlamaWeights::load(directory, llama::LlamaConfig::from_file(directory / "config.json"), at::kCPU), 512);
    const safetensors::File file(directory / "model.safetensors");
    const CodeDigitDistribution distribution(*drafts::code_grid_of(file.metadata(), test::vocab_size, "x"));
    const int64_t rows = distribution.grid().head_rows();
    std::vector<float> w = file.read_f32("digits.weight"), b = file.read_f32("digits.bias");
    const at::Tensor weight = at::from_blob(w.data(), {rows, test::hidden_size}, at::kFloat);
    const at::Tensor bias = at::from_blob(b.data(), {rows}, at::kFloat);
    test::DrafterPlugin drafter("plugin = \"draft.shallow\"\nmodel = \"" + directory.string() + "\"\nlength = 3\n");
    std::vector<int32_t> sequence = test::prompt_tokens("digits.");
    const auto p = drafter.propose(drafter.new_session(), sequence, test::synthesis_sampling(1.0));
    ASSERT_EQ(p.tokens.size(), 3u);
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        const at::Tensor ids = at::tensor(std::vector<int64_t>(sequence.begin(), sequence.end()), at::kLong);
        const at::Tensor hidden = reference.forward_sequence(ids.unsqueeze(0))[0][-1];
        const at::Tensor lp = distribution.log_probabilities(at::addmv(bias, weight, hidden));
        EXPECT_LT(difference_to_synthesis_distribution(p.probabilities.data() + i * test::vocab_size, lp), 1e-5)
            << "node " << i;
        sequence.push_back(p.tokens[i]);
    }
}

// draft.shallow on the target itself with the draft's code-digit head as a
// `digit_head` file and `candidates = K`: each row is the softmax of the
// target's table rows of the head's K most likely allowed tokens, zero
// elsewhere.
TEST(CodeDigitHead, ShallowCandidatesAreTheDigitHeadsBestTokensScoredByTheModelsTable) {
    c10::InferenceMode inference;
    const auto& models = test::draft_models();
    const std::filesystem::path head_file = models.draft_digits / "model.safetensors";
    const llama::LlamaModel reference(
        llama::LlamaWeights::load(models.target, llama::LlamaConfig::from_file(models.target / "config.json"), at::kCPU),
        512);
    const safetensors::File file(head_file);
    const CodeDigitDistribution distribution(*drafts::code_grid_of(file.metadata(), test::vocab_size, "x"));
    const int64_t rows = distribution.grid().head_rows();
    std::vector<float> w = file.read_f32("digits.weight"), b = file.read_f32("digits.bias");
    const at::Tensor weight = at::from_blob(w.data(), {rows, test::hidden_size}, at::kFloat);
    const at::Tensor bias = at::from_blob(b.data(), {rows}, at::kFloat);
    constexpr int64_t count = 6;
    test::DrafterPlugin drafter("plugin = \"draft.shallow\"\nmodel = \"" + models.target.string() +
                                "\"\ndigit_head = \"" + head_file.string() + "\"\ncandidates = 6\nlength = 3\n");
    const double temperature = 0.8;
    const cdz_sampling sampling = test::synthesis_sampling(temperature);
    std::vector<int32_t> sequence = test::prompt_tokens("candidates.");
    const auto p = drafter.propose(drafter.new_session(), sequence, sampling);
    ASSERT_EQ(p.tokens.size(), 3u);
    for (size_t i = 0; i < p.tokens.size(); ++i) {
        const at::Tensor ids = at::tensor(std::vector<int64_t>(sequence.begin(), sequence.end()), at::kLong);
        const at::Tensor hidden = reference.forward_sequence(ids.unsqueeze(0))[0][-1].contiguous();
        const at::Tensor head_logits = at::addmv(bias, weight, hidden).contiguous();
        std::vector<int32_t> candidates;
        drafts::TokenBeam beam;
        distribution.most_likely_tokens(head_logits.data_ptr<float>(), &sampling, count, candidates, beam);
        ASSERT_EQ(candidates.size(), static_cast<size_t>(count));
        const at::Tensor tokens = at::tensor(std::vector<int64_t>(candidates.begin(), candidates.end()), at::kLong);
        const at::Tensor scores = at::mv(models.target_weights.lm_head.to(at::kDouble).index_select(0, tokens),
                                         hidden.to(at::kDouble));
        test::expect_candidate_row(p.probabilities.data() + i * test::vocab_size, tokens, scores, temperature,
                                   p.tokens[i], "node " + std::to_string(i));
        sequence.push_back(p.tokens[i]);
    }
}

TEST(CodeDigitHead, ShallowCandidatesAndDigitHeadErrorsNameTheFileAndTheKey) {
    const auto& models = test::draft_models();
    const auto expect_error = [](const std::string& table, const std::vector<std::string>& parts) {
        try {
            test::DrafterPlugin drafter(table);
            FAIL() << "accepted:\n" << table;
        } catch (const Error& e) {
            for (const auto& part : parts)
                EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what() << "\nmissing: " << part;
        }
    };
    const std::string target = "plugin = \"draft.shallow\"\nmodel = \"" + models.target.string() + "\"\n";
    // The target has no code-digit head of its own.
    expect_error(target + "candidates = 4\n", {"candidates", models.target.string(), "digit_head"});
    // A file without a code-digit head's metadata (the target's own weights).
    const std::filesystem::path weights = models.target / "model.safetensors";
    expect_error(target + "digit_head = \"" + weights.string() + "\"\n", {"digit_head", weights.string()});
    // A missing file is the host's error, with the key.
    expect_error(target + "digit_head = \"" + (models.directory / "absent.safetensors").string() + "\"\n",
                 {"digit_head", "absent.safetensors"});
}

}  // namespace
}  // namespace cadenza
