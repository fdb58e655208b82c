#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "fortune_sentences.h"

namespace cadenza::speech_corpus {
namespace {

const std::string fixtures = SPEECH_CORPUS_FIXTURES;

TEST(FortuneSentences, EntriesAreSeparatedByPercentLines) {
    const auto entries = fortune_entries("one\ntwo\n%\nthree\n%\n\n%\nfour\n");
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0], "one\ntwo\n");
    EXPECT_EQ(entries[2], "four\n");
}

TEST(FortuneSentences, ParagraphsDropAttributionsAndLabelsAndJoinWrappedLines) {
    const auto paragraphs = fortune_paragraphs(
        "A bore is a man who talks\nabout himself.\n\t\t-- Lisa Kirk,\n\t\t   in a book\nQ:\tWho is there?\n"
        "Pee Wee:\t\"Me.\"\n\tAn indented line after a sentence starts anew\n\tbut one after an unfinished line goes on.\n");
    const std::vector<std::string> expected = {
        "A bore is a man who talks about himself.", "Who is there?", "\"Me.\"",
        "An indented line after a sentence starts anew but one after an unfinished line goes on."};
    EXPECT_EQ(paragraphs, expected);
}

TEST(FortuneSentences, SplitsSentencesButNotAfterTitlesOrInitials) {
    const auto sentences =
        split_sentences("Mr. J. Smith went home. Did he? \"Yes!\" he said. It cost 5 dollars. and more... Then 3 left.");
    const std::vector<std::string> expected = {"Mr. J. Smith went home.", "Did he?", "\"Yes!\" he said.",
                                               "It cost 5 dollars. and more...", "Then 3 left."};
    EXPECT_EQ(sentences, expected);
}

TEST(FortuneSentences, ListsPlainFilesOnly) {
    const auto files = fortune_files(fixtures + "/fortunes");
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(std::filesystem::path(files[0]).filename(), "sample");
    EXPECT_THROW(fortune_files(fixtures + "/no-such-directory"), std::invalid_argument);
}

TEST(FortuneSentences, ExtractsNormalizedUniqueSentencesOfFourToTwentyFiveWords) {
    const SentenceExtraction extraction = extract_fortune_sentences(fortune_files(fixtures + "/fortunes"));
    std::vector<std::string> texts;
    for (const auto& s : extraction.sentences) texts.push_back(s.text);
    const std::vector<std::string> expected = {
        "a bore is a man who talks so much about himself that you can't talk about yourself",
        "the royal canadian mounted police",
        "what was the greatest achievement in taxidermy",
        "water please can you give water",
        "i'm sorry replies the man on the camel i don't have any water with me",
        "but i'd be delighted to sell you a necktie",
        "mister smith went to washington in nineteen thirty nine",
        "he paid five dollars for a map of saint louis",
    };
    EXPECT_EQ(texts, expected);
    EXPECT_EQ(extraction.files, 1);
    EXPECT_EQ(extraction.entries, 6);
    EXPECT_EQ(extraction.duplicates, 1);     // the bore, twice
    EXPECT_EQ(extraction.unreadable, 2);     // "...ANSWERS: #13" and the URL
    EXPECT_EQ(extraction.wrong_length, 1);   // "Short one."
    EXPECT_EQ(extraction.sentences[3].spoken, "water, please, can you give, water.");

    const SentenceExtraction short_only = extract_fortune_sentences(fortune_files(fixtures + "/fortunes"), 2, 5);
    EXPECT_EQ(short_only.sentences.size(), 2u);  // the police and "short one"
}

}  // namespace
}  // namespace cadenza::speech_corpus
