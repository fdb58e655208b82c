#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sentence_splits.h"

namespace cadenza::speech_corpus {
namespace {

std::vector<NormalizedSentence> numbered_sentences(int from, int to) {
    std::vector<NormalizedSentence> sentences;
    for (int i = from; i < to; ++i) {
        NormalizedSentence s;
        s.text = "this is sentence number " + std::to_string(i);
        s.spoken = s.text + ".";
        s.words = 5;
        sentences.push_back(s);
    }
    return sentences;
}

TEST(SentenceSplits, ProportionsAreAboutFiveAndThreePercent) {
    const auto sentences = assign_splits(numbered_sentences(0, 20000));
    ASSERT_EQ(sentences.size(), 20000u);
    std::map<std::string, int> counts;
    for (const auto& s : sentences) ++counts[s.split];
    EXPECT_NEAR(counts["test"], 1000, 120);
    EXPECT_NEAR(counts["dev"], 600, 100);
    EXPECT_EQ(counts["train"] + counts["test"] + counts["dev"], 20000);
}

TEST(SentenceSplits, IdsAndSplitsDependOnTheTextAloneSoAddingSentencesMovesNothing) {
    const auto small = assign_splits(numbered_sentences(0, 500));
    const auto large = assign_splits(numbered_sentences(0, 5000));
    std::map<std::string, std::pair<std::string, std::string>> by_text;
    for (const auto& s : large) by_text[s.text] = {s.id, s.split};
    for (const auto& s : small) {
        EXPECT_EQ(by_text.at(s.text).first, s.id);
        EXPECT_EQ(by_text.at(s.text).second, s.split);
    }
    // Ordered by hash, ids unique, each text in exactly one split.
    std::set<std::string> ids, texts;
    for (size_t i = 0; i < large.size(); ++i) {
        if (i > 0) EXPECT_LE(large[i - 1].hash, large[i].hash);
        EXPECT_TRUE(ids.insert(large[i].id).second);
        EXPECT_TRUE(texts.insert(large[i].text).second);
        EXPECT_EQ(large[i].id.size(), 13u);
    }
    EXPECT_EQ(sentence_hash("a fixed sentence"), sentence_hash("a fixed sentence"));
    EXPECT_NE(sentence_hash("a fixed sentence"), sentence_hash("a fixed sentence "));
}

TEST(SentenceSplits, LimitPerSplitKeepsTheFirstInHashOrder) {
    const auto sentences = assign_splits(numbered_sentences(0, 2000));
    const auto limited = limit_per_split(sentences, 3);
    std::map<std::string, int> counts;
    for (const auto& s : limited) ++counts[s.split];
    EXPECT_EQ(counts["train"], 3);
    EXPECT_EQ(counts["dev"], 3);
    EXPECT_EQ(counts["test"], 3);
}

TEST(SentenceSplits, WritesTheSentenceList) {
    const auto sentences = assign_splits(numbered_sentences(0, 3));
    const auto path = std::filesystem::temp_directory_path() / ("cadenza-sentences-" + std::to_string(::getpid()) + ".tsv");
    write_sentences_tsv(path.string(), sentences);
    std::ifstream input(path);
    std::string line;
    std::getline(input, line);
    EXPECT_EQ(line, "id\tsplit\ttext");
    std::getline(input, line);
    EXPECT_EQ(line, sentences[0].id + "\t" + sentences[0].split + "\t" + sentences[0].text);
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace cadenza::speech_corpus
