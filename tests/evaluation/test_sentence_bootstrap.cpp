#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "sentence_bootstrap.h"

namespace cadenza::evaluation {
namespace {

using recognition::EditCounts;

EditCounts sentence(int64_t errors, int64_t words) {
    EditCounts counts;
    counts.substitutions = errors;
    counts.reference_length = words;
    return counts;
}

// 40 sentences of 3 to 12 words with 0 to 4 errors, varied but fixed.
std::vector<EditCounts> varied_sentences() {
    std::vector<EditCounts> sentences;
    for (int i = 0; i < 40; ++i) sentences.push_back(sentence((i * 7) % 5, 3 + (i * 5) % 10));
    return sentences;
}

double point_wer_percent(const std::vector<EditCounts>& sentences) {
    EditCounts total;
    for (const auto& s : sentences) total += s;
    return 100.0 * total.rate();
}

TEST(WerBootstrap, IdenticalPipelinesDifferByExactlyZero) {
    const auto sentences = varied_sentences();
    const SentenceBootstrap bootstrap(sentences.size());
    const Interval difference = bootstrap.wer_difference_points(sentences, sentences);
    EXPECT_EQ(difference.low, 0.0);
    EXPECT_EQ(difference.high, 0.0);
}

TEST(WerBootstrap, MoreErrorsOnEverySentenceGiveAnIntervalAboveZero) {
    const auto baseline = varied_sentences();
    auto worse = baseline;
    for (auto& s : worse) s.deletions += 1;
    const SentenceBootstrap bootstrap(baseline.size());
    const Interval difference = bootstrap.wer_difference_points(worse, baseline);
    EXPECT_GT(difference.low, 0.0);
    EXPECT_GE(difference.high, difference.low);
    // Reversed, it lies below zero by as much.
    const Interval reversed = bootstrap.wer_difference_points(baseline, worse);
    EXPECT_LT(reversed.high, 0.0);
    EXPECT_DOUBLE_EQ(reversed.low, -difference.high);
    EXPECT_DOUBLE_EQ(reversed.high, -difference.low);
}

TEST(WerBootstrap, IntervalContainsThePointEstimate) {
    const auto sentences = varied_sentences();
    const Interval wer = SentenceBootstrap(sentences.size()).wer_percent(sentences);
    const double point = point_wer_percent(sentences);
    EXPECT_LT(wer.low, point);
    EXPECT_GT(wer.high, point);
}

TEST(WerBootstrap, RepeatsWithItsSeedAndChangesWithAnother) {
    const auto sentences = varied_sentences();
    const Interval first = SentenceBootstrap(sentences.size(), 2000, 7).wer_percent(sentences);
    const Interval again = SentenceBootstrap(sentences.size(), 2000, 7).wer_percent(sentences);
    const Interval other = SentenceBootstrap(sentences.size(), 2000, 8).wer_percent(sentences);
    EXPECT_EQ(first.low, again.low);
    EXPECT_EQ(first.high, again.high);
    EXPECT_TRUE(first.low != other.low || first.high != other.high);
}

TEST(WerBootstrap, OneSentenceHasNoSpread) {
    const Interval wer = SentenceBootstrap(1).wer_percent({sentence(1, 4)});
    EXPECT_DOUBLE_EQ(wer.low, 25.0);
    EXPECT_DOUBLE_EQ(wer.high, 25.0);
}

TEST(WerBootstrap, TwoSentencesSpanBothExtremes) {
    // Resamples are {wrong, wrong} (100 %), mixed (50 %) or {right, right}
    // (0 %) with probabilities 1/4, 1/2, 1/4: the 2.5 % and 97.5 % quantiles
    // of 2,000 of them are 0 and 100.
    const Interval wer = SentenceBootstrap(2).wer_percent({sentence(1, 1), sentence(0, 1)});
    EXPECT_EQ(wer.low, 0.0);
    EXPECT_EQ(wer.high, 100.0);
}

TEST(WerBootstrap, WidthMatchesTheBinomialSpread) {
    // 200 one-word sentences, 60 wrong: WER 30 %, standard error
    // sqrt(0.3 * 0.7 / 200) = 3.24 points, so a 95 % interval about 12.7 wide.
    std::vector<EditCounts> sentences;
    for (int i = 0; i < 200; ++i) sentences.push_back(sentence(i % 10 < 3 ? 1 : 0, 1));
    const Interval wer = SentenceBootstrap(sentences.size()).wer_percent(sentences);
    EXPECT_NEAR(wer.high - wer.low, 12.7, 1.5);
    EXPECT_NEAR((wer.low + wer.high) / 2, 30.0, 1.0);
}

TEST(WerBootstrap, MoreSentencesNarrowTheInterval) {
    const auto few = varied_sentences();
    std::vector<EditCounts> many;
    for (int copy = 0; copy < 4; ++copy) many.insert(many.end(), few.begin(), few.end());
    const Interval narrow = SentenceBootstrap(many.size()).wer_percent(many);
    const Interval wide = SentenceBootstrap(few.size()).wer_percent(few);
    // Four times the sentences: about half the width.
    EXPECT_NEAR((narrow.high - narrow.low) / (wide.high - wide.low), 0.5, 0.1);
}

TEST(WerBootstrap, RefusesMismatchedInputs) {
    const SentenceBootstrap bootstrap(3);
    EXPECT_THROW(bootstrap.wer_percent({sentence(0, 1)}), std::invalid_argument);
    EXPECT_THROW(bootstrap.wer_difference_points({sentence(0, 1), sentence(0, 1), sentence(0, 1)}, {}),
                 std::invalid_argument);
    EXPECT_THROW(SentenceBootstrap(3, 0), std::invalid_argument);
    EXPECT_THROW(SentenceBootstrap(3, 10, 1, 1.0), std::invalid_argument);
}

// 40 sentences of 50 to 410 tokens, each taking 0.1 to 0.8 s in the baseline.
std::vector<TimedTokens> varied_timings() {
    std::vector<TimedTokens> sentences;
    for (int i = 0; i < 40; ++i) sentences.push_back({50.0 + (i * 37) % 361, 0.1 + 0.1 * ((i * 3) % 8)});
    return sentences;
}

double point_speedup(const std::vector<TimedTokens>& pipeline, const std::vector<TimedTokens>& baseline) {
    std::vector<size_t> all(pipeline.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return resample_tokens_per_second(pipeline, all) / resample_tokens_per_second(baseline, all);
}

TEST(SpeedupBootstrap, TheSamePipelineIsExactlyAsFast) {
    const auto timings = varied_timings();
    const Interval speedup = SentenceBootstrap(timings.size()).speedup(timings, timings);
    EXPECT_EQ(speedup.low, 1.0);
    EXPECT_EQ(speedup.high, 1.0);
}

// Paired: sentences that differ in length and rate move both pipelines
// alike, so a pipeline twice as fast on every sentence is twice as fast in
// every resample, however much the sentences differ.
TEST(SpeedupBootstrap, TwiceAsFastOnEverySentenceHasNoSpread) {
    const auto baseline = varied_timings();
    auto faster = baseline;
    for (auto& s : faster) s.seconds /= 2;
    const Interval speedup = SentenceBootstrap(baseline.size()).speedup(faster, baseline);
    EXPECT_DOUBLE_EQ(speedup.low, 2.0);
    EXPECT_DOUBLE_EQ(speedup.high, 2.0);
}

TEST(SpeedupBootstrap, IntervalContainsThePointEstimateAndNarrowsWithMoreSentences) {
    const auto baseline = varied_timings();
    auto pipeline = baseline;
    for (size_t i = 0; i < pipeline.size(); ++i) pipeline[i].seconds /= 1.5 + 0.1 * static_cast<double>(i % 7);
    const Interval speedup = SentenceBootstrap(baseline.size()).speedup(pipeline, baseline);
    const double point = point_speedup(pipeline, baseline);
    EXPECT_LT(speedup.low, point);
    EXPECT_GT(speedup.high, point);
    EXPECT_GT(speedup.low, 1.5);
    EXPECT_LT(speedup.high, 2.1);

    std::vector<TimedTokens> many_baseline, many_pipeline;
    for (int copy = 0; copy < 4; ++copy) {
        many_baseline.insert(many_baseline.end(), baseline.begin(), baseline.end());
        many_pipeline.insert(many_pipeline.end(), pipeline.begin(), pipeline.end());
    }
    const Interval narrow = SentenceBootstrap(many_baseline.size()).speedup(many_pipeline, many_baseline);
    EXPECT_NEAR((narrow.high - narrow.low) / (speedup.high - speedup.low), 0.5, 0.1);
}

// A failed synthesis adds no tokens and no time (it is left out of the speed
// figures); a resample of failed sentences alone has no speed and is left out.
TEST(SpeedupBootstrap, ResamplesWithoutTimeAreLeftOut) {
    const Interval speedup = SentenceBootstrap(2).speedup({{10, 1}, {0, 0}}, {{10, 2}, {10, 2}});
    EXPECT_DOUBLE_EQ(speedup.low, 2.0);
    EXPECT_DOUBLE_EQ(speedup.high, 2.0);
    const Interval none = SentenceBootstrap(2).speedup({{0, 0}, {0, 0}}, {{10, 2}, {10, 2}});
    EXPECT_EQ(none.low, 0.0);
    EXPECT_EQ(none.high, 0.0);
}

TEST(SpeedupBootstrap, RefusesMismatchedInputs) {
    const SentenceBootstrap bootstrap(2);
    EXPECT_THROW(bootstrap.speedup({{1, 1}}, {{1, 1}, {1, 1}}), std::invalid_argument);
    EXPECT_THROW(bootstrap.speedup({{1, 1}, {1, 1}}, {}), std::invalid_argument);
}

TEST(ResampleTokensPerSecond, SumsTokensAndSecondsBeforeDividing) {
    // (10 + 10 + 90) / (1 + 1 + 1), not the mean of 10, 10 and 90 tokens/s.
    const std::vector<TimedTokens> sentences{{10, 1}, {90, 1}};
    EXPECT_DOUBLE_EQ(resample_tokens_per_second(sentences, {0, 0, 1}), 110.0 / 3);
    EXPECT_EQ(resample_tokens_per_second({{0, 0}}, {0}), 0.0);
}

TEST(PercentileInterval, InterpolatesBetweenOrderStatistics) {
    std::vector<double> values;
    for (int i = 100; i >= 0; --i) values.push_back(i);  // unsorted on purpose
    const Interval ninety = percentile_interval(values, 0.9);
    EXPECT_DOUBLE_EQ(ninety.low, 5.0);
    EXPECT_DOUBLE_EQ(ninety.high, 95.0);
    const Interval half = percentile_interval({10.0, 0.0}, 0.5);
    EXPECT_DOUBLE_EQ(half.low, 2.5);
    EXPECT_DOUBLE_EQ(half.high, 7.5);
    EXPECT_THROW(percentile_interval({}, 0.95), std::invalid_argument);
}

TEST(ResampleWer, SumsErrorsAndWordsBeforeDividing) {
    // (1 + 1 + 0) / (2 + 2 + 8), not the mean of 50 %, 50 % and 0 %.
    const std::vector<EditCounts> sentences{sentence(1, 2), sentence(0, 8)};
    EXPECT_DOUBLE_EQ(resample_wer_percent(sentences, {0, 0, 1}), 100.0 * 2 / 12);
}

}  // namespace
}  // namespace cadenza::evaluation
