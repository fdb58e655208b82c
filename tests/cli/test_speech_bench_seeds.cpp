// The speech suite's WER and speedup intervals with several seeds per
// sentence (cli/speech_bench_report.cpp): a sentence's seeds are resampled
// together.
#include <gtest/gtest.h>

#include <stdexcept>

#include "speech_bench_report.h"

namespace cadenza::cli {
namespace {

recognition::UtteranceResult said(const std::string& id, int64_t errors, int64_t words) {
    recognition::UtteranceResult result;
    result.id = id;
    result.words.substitutions = errors;
    result.words.reference_length = words;
    return result;
}

// Sentences a and b, two seeds each: a, b with the first seed, then a, b.
SpeechPipelineResult two_seeds(int64_t a1, int64_t b1, int64_t a2, int64_t b2) {
    SpeechPipelineResult pipeline;
    pipeline.recognized = {said("a", a1, 6), said("b", b1, 5), said("a", a2, 6), said("b", b2, 5)};
    pipeline.sentences.resize(4);
    for (const auto& r : pipeline.recognized) pipeline.errors.add(r);
    return pipeline;
}

TEST(SpeechBenchSeeds, EachSentenceSumsItsSeeds) {
    const auto words = sentence_word_counts(two_seeds(1, 2, 3, 0), 2);
    ASSERT_EQ(words.size(), 2u);
    EXPECT_EQ(words[0].errors(), 4);
    EXPECT_EQ(words[0].reference_length, 12);
    EXPECT_EQ(words[1].errors(), 2);
    EXPECT_EQ(words[1].reference_length, 10);
}

TEST(SpeechBenchSeeds, OneSeedIsEachSentenceAlone) {
    SpeechPipelineResult pipeline;
    pipeline.recognized = {said("a", 1, 6), said("b", 2, 5)};
    const auto words = sentence_word_counts(pipeline, 2);
    EXPECT_EQ(words[0].errors(), 1);
    EXPECT_EQ(words[1].errors(), 2);
}

TEST(SpeechBenchSeeds, SynthesesNotAWholeNumberOfSeedsAreRefused) {
    SpeechPipelineResult pipeline;
    pipeline.recognized = {said("a", 1, 6), said("b", 2, 5), said("a", 0, 6)};
    EXPECT_THROW(sentence_word_counts(pipeline, 2), std::invalid_argument);
    EXPECT_THROW(sentence_word_counts(pipeline, 0), std::invalid_argument);
}

// Where the seeds of one sentence disagree with each other but the two
// pipelines agree per sentence, resampling the sentences with their seeds
// gives a paired difference of exactly zero, whichever sentences a resample
// holds; resampling the syntheses one by one would not pair them by seed.
TEST(SpeechBenchSeeds, ThePairedDifferenceResamplesSentencesWithTheirSeeds) {
    SpeechBenchResult result;
    result.seeds = 2;
    result.sentences.sentences.resize(2);
    result.pipelines = {two_seeds(0, 5, 6, 0), two_seeds(6, 0, 0, 5)};
    estimate_intervals(result);
    const auto& difference = result.pipelines[1].wer_difference_ci95;
    EXPECT_DOUBLE_EQ(difference.low, 0.0);
    EXPECT_DOUBLE_EQ(difference.high, 0.0);
    const auto& wer = result.pipelines[0].wer_percent_ci95;
    EXPECT_LE(wer.low, 50.0);
    EXPECT_GE(wer.high, 50.0);
}

SentenceSynthesis timed(int64_t tokens, double loop_seconds) {
    SentenceSynthesis synthesis;
    synthesis.tokens = tokens;
    synthesis.loop_seconds = loop_seconds;
    synthesis.wall_seconds = loop_seconds + 0.5;  // the speed figures count the loop alone
    return synthesis;
}

TEST(SpeechBenchSeeds, EachSentenceSumsItsSeedsTimingsAndAFailedOneAddsNothing) {
    SpeechPipelineResult pipeline;
    pipeline.sentences = {timed(100, 0.5), timed(40, 0.25), timed(120, 0.75), timed(7, 9.0)};
    pipeline.sentences[3].failure = SentenceFailure{"too long", false};
    const auto timings = sentence_timed_tokens(pipeline, 2);
    ASSERT_EQ(timings.size(), 2u);
    EXPECT_DOUBLE_EQ(timings[0].tokens, 220);
    EXPECT_DOUBLE_EQ(timings[0].seconds, 1.25);
    EXPECT_DOUBLE_EQ(timings[1].tokens, 40);
    EXPECT_DOUBLE_EQ(timings[1].seconds, 0.25);
    pipeline.sentences.pop_back();
    EXPECT_THROW(sentence_timed_tokens(pipeline, 2), std::invalid_argument);
}

// Sentence a decodes at 100 tokens/s and b at 400 in the first pipeline;
// the second is 1.5x as fast on each, so every resample of the sentences
// (with their seeds) gives 1.5x, and the first pipeline 1x.
TEST(SpeechBenchSeeds, TheSpeedupIntervalPairsSentencesWithTheirSeeds) {
    SpeechBenchResult result;
    result.seeds = 2;
    result.sentences.sentences.resize(2);
    SpeechPipelineResult baseline, faster;
    baseline.sentences = {timed(100, 1.0), timed(400, 1.0), timed(50, 0.5), timed(800, 2.0)};
    faster.sentences = {timed(100, 1.0 / 1.5), timed(400, 1.0 / 1.5), timed(50, 0.5 / 1.5), timed(800, 2.0 / 1.5)};
    result.pipelines = {baseline, faster};
    estimate_intervals(result);
    EXPECT_DOUBLE_EQ(result.pipelines[0].speedup_ci95.low, 1.0);
    EXPECT_DOUBLE_EQ(result.pipelines[0].speedup_ci95.high, 1.0);
    EXPECT_NEAR(result.pipelines[1].speedup_ci95.low, 1.5, 1e-12);
    EXPECT_NEAR(result.pipelines[1].speedup_ci95.high, 1.5, 1e-12);
}

}  // namespace
}  // namespace cadenza::cli
