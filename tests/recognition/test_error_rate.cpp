#include <gtest/gtest.h>

#include "error_rate.h"
#include "transcription_run.h"

namespace cadenza::recognition {
namespace {

TEST(Normalization, LowercasesStripsPunctuationAndCollapsesWhitespace) {
    EXPECT_EQ(normalize_for_scoring("  Hello,   World!\tHow ARE you?\n"), "hello world how are you");
    EXPECT_EQ(normalize_for_scoring("well-known e.g. (this) \"that\""), "well known e g this that");
    EXPECT_EQ(normalize_for_scoring(""), "");
    EXPECT_EQ(normalize_for_scoring(" ... !!! "), "");
}

TEST(Normalization, KeepsApostrophesInsideWordsOnly) {
    EXPECT_EQ(normalize_for_scoring("Don't say 'never' to the dogs' owner"), "don't say never to the dogs owner");
    EXPECT_EQ(normalize_for_scoring("it\u2019s"), "it's");  // a typographic apostrophe
    EXPECT_EQ(normalize_for_scoring("'tis rock 'n' roll"), "tis rock n roll");
}

TEST(Normalization, KeepsDigitsAndNonAsciiLetters) {
    EXPECT_EQ(normalize_for_scoring("Room 101"), "room 101");
    EXPECT_EQ(normalize_for_scoring("caf\u00e9 \u2014 na\u00efve\u2026"), "caf\u00e9 na\u00efve");
}

TEST(WordErrors, CountsSubstitutionsDeletionsAndInsertionsSeparately) {
    // "sat" -> "sit" substituted, "the" deleted, "down" inserted.
    const EditCounts counts = word_errors("the cat sat on the mat", "the cat sit on mat down");
    EXPECT_EQ(counts.substitutions, 1);
    EXPECT_EQ(counts.deletions, 1);
    EXPECT_EQ(counts.insertions, 1);
    EXPECT_EQ(counts.reference_length, 6);
    EXPECT_DOUBLE_EQ(counts.rate(), 3.0 / 6.0);
}

TEST(WordErrors, NormalizesBothSidesFirst) {
    const EditCounts counts = word_errors("Hello, World!", "hello world");
    EXPECT_EQ(counts.errors(), 0);
    EXPECT_EQ(counts.reference_length, 2);
}

TEST(WordErrors, PrefersMatchesAmongEquallyShortAlignments) {
    // Two substitutions or a deletion, a match and an insertion: both cost 2.
    const EditCounts counts = word_errors("a b", "b c");
    EXPECT_EQ(counts.errors(), 2);
    EXPECT_EQ(counts.substitutions, 0);
    EXPECT_EQ(counts.deletions, 1);
    EXPECT_EQ(counts.insertions, 1);
}

TEST(WordErrors, EmptyHypothesisDeletesEveryWord) {
    const EditCounts counts = word_errors("one two three", "");
    EXPECT_EQ(counts.deletions, 3);
    EXPECT_EQ(counts.substitutions + counts.insertions, 0);
    EXPECT_DOUBLE_EQ(counts.rate(), 1.0);
}

TEST(WordErrors, EmptyReference) {
    const EditCounts inserted = word_errors("", "some words here");
    EXPECT_EQ(inserted.insertions, 3);
    EXPECT_EQ(inserted.reference_length, 0);
    EXPECT_DOUBLE_EQ(inserted.rate(), 1.0);
    const EditCounts nothing = word_errors("", "");
    EXPECT_EQ(nothing.errors(), 0);
    EXPECT_DOUBLE_EQ(nothing.rate(), 0.0);
}

TEST(CharacterErrors, CountCodePointsWithTheSpacesBetweenWords) {
    const EditCounts counts = character_errors("any one", "anyone");
    EXPECT_EQ(counts.reference_length, 7);
    EXPECT_EQ(counts.deletions, 1);
    EXPECT_EQ(counts.errors(), 1);
    // One code point, two bytes in UTF-8.
    const EditCounts accent = character_errors("caf\u00e9", "cafe");
    EXPECT_EQ(accent.reference_length, 4);
    EXPECT_EQ(accent.substitutions, 1);
}

TEST(Aggregation, SumsErrorsOverReferenceLengthsNotMeanOfRates) {
    EditCounts total;
    total += word_errors("a", "b");                            // 1 error in 1 word: 100%
    total += word_errors("a b c d e f g h i", "a b c d e f g h i");  // 0 errors in 9 words: 0%
    EXPECT_EQ(total.errors(), 1);
    EXPECT_EQ(total.reference_length, 10);
    EXPECT_DOUBLE_EQ(total.rate(), 0.1);  // the mean of the rates would be 0.5
}

TEST(Aggregation, SummarizeAddsTotalsAndGroups) {
    std::vector<UtteranceResult> results(3);
    results[0].group = "slt";
    results[0].words = word_errors("a b", "a");
    results[0].audio_seconds = 2.0;
    results[0].recognition_seconds = 0.5;
    results[1].group = "slt";
    results[1].words = word_errors("c d e", "c d e");
    results[1].audio_seconds = 3.0;
    results[1].recognition_seconds = 0.5;
    results[2].group = "awb";
    results[2].words = word_errors("f", "g h");
    results[2].audio_seconds = 1.0;
    const ErrorReport report = summarize(results);
    EXPECT_EQ(report.total.utterances, 3u);
    EXPECT_EQ(report.total.words.errors(), 3);
    EXPECT_EQ(report.total.words.reference_length, 6);
    ASSERT_EQ(report.by_group.size(), 2u);
    EXPECT_EQ(report.by_group.at("slt").words.deletions, 1);
    EXPECT_EQ(report.by_group.at("slt").words.reference_length, 5);
    EXPECT_DOUBLE_EQ(report.by_group.at("slt").real_time_factor(), 0.2);
    EXPECT_EQ(report.by_group.at("awb").words.errors(), 2);
}

TEST(Pcm16, ScalesRoundsAndClips) {
    const std::vector<short> pcm = to_pcm16({0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 3.0f, -3.0f});
    EXPECT_EQ(pcm, (std::vector<short>{0, 16384, -16384, 32767, -32767, 32767, -32768}));
}

}  // namespace
}  // namespace cadenza::recognition
