#include <gtest/gtest.h>

#include "number_words.h"
#include "text_normalizer.h"

namespace cadenza::speech_corpus {
namespace {

std::string text_of(const std::string& sentence) {
    std::string rejection;
    const auto normalized = normalize_sentence(sentence, &rejection);
    return normalized ? normalized->text : "<rejected: " + rejection + ">";
}

std::string spoken_of(const std::string& sentence) {
    const auto normalized = normalize_sentence(sentence);
    return normalized ? normalized->spoken : "<rejected>";
}

TEST(NumberWords, CardinalsOrdinalsYearsAndDigits) {
    EXPECT_EQ(cardinal_words(0), "zero");
    EXPECT_EQ(cardinal_words(13), "thirteen");
    EXPECT_EQ(cardinal_words(21), "twenty one");
    EXPECT_EQ(cardinal_words(101), "one hundred one");
    EXPECT_EQ(cardinal_words(1000000), "one million");
    EXPECT_EQ(cardinal_words(2005030), "two million five thousand thirty");
    EXPECT_EQ(ordinal_words(1), "first");
    EXPECT_EQ(ordinal_words(12), "twelfth");
    EXPECT_EQ(ordinal_words(20), "twentieth");
    EXPECT_EQ(ordinal_words(103), "one hundred third");
    EXPECT_EQ(year_words(1984), "nineteen eighty four");
    EXPECT_EQ(year_words(1900), "nineteen hundred");
    EXPECT_EQ(year_words(1905), "nineteen oh five");
    EXPECT_EQ(year_words(2005), "two thousand five");
    EXPECT_EQ(year_words(2010), "twenty ten");
    EXPECT_EQ(year_words(2000), "two thousand");
    EXPECT_EQ(digit_words("007"), "zero zero seven");
    EXPECT_EQ(plural_number_words("nineteen sixty"), "nineteen sixties");
}

TEST(TextNormalizer, SpellsOutNumbersMoneyAndSymbols) {
    EXPECT_EQ(text_of("Mr. Smith paid $3.50 for 2 apples."),
              "mister smith paid three dollars and fifty cents for two apples");
    EXPECT_EQ(text_of("In 1984, 10% of the 1st class went to St. Louis & Chicago!"),
              "in nineteen eighty four ten percent of the first class went to saint louis and chicago");
    EXPECT_EQ(text_of("It cost $5 million in the 1960s."), "it cost five million dollars in the nineteen sixties");
    EXPECT_EQ(text_of("The 21st, 22nd, 103rd and 11th."), "the twenty first twenty second one hundred third and eleventh");
    EXPECT_EQ(text_of("About 1,000,000 people paid $1 or $0.25 each."),
              "about one million people paid one dollar or twenty five cents each");
    EXPECT_EQ(text_of("Pi is about 3.14159, not .5 or -5."),
              "pi is about three point one four one five nine not point five or minus five");
    EXPECT_EQ(text_of("Meet me at 10:30 or 5:00 or 9:05."), "meet me at ten thirty or five o'clock or nine oh five");
    EXPECT_EQ(text_of("From 1990-1995 it grew 2.5%."), "from nineteen ninety to nineteen ninety five it grew two point five percent");
    EXPECT_EQ(text_of("Agent 007 has 1066 men."), "agent zero zero seven has one thousand sixty six men");
}

TEST(TextNormalizer, ExpandsAbbreviationsByContext) {
    EXPECT_EQ(text_of("He lives on Main St. now."), "he lives on main street now");
    EXPECT_EQ(text_of("Dr. Jones met Mrs. Brown, e.g. at the U.S.A. embassy."),
              "doctor jones met missus brown for example at the u s a embassy");
    EXPECT_EQ(text_of("Bring apples, pears, etc. to room No. 5 at 3 p.m."),
              "bring apples pears et cetera to room number five at three p m");
    EXPECT_EQ(text_of("We watched TV at NASA."), "we watched t v at nasa");
}

TEST(TextNormalizer, KeepsProsodicPunctuationOnlyInTheSpokenText) {
    const std::string sentence = "\"I don't know,\" she said -- 'really.'";
    EXPECT_EQ(text_of(sentence), "i don't know she said really");
    EXPECT_EQ(spoken_of(sentence), "i don't know, she said, really.");
    EXPECT_EQ(spoken_of("Who's there?"), "who's there?");
    EXPECT_EQ(spoken_of("Water... please... water"), "water, please, water.");
    EXPECT_EQ(text_of("A well-known trick, and/or he/she (maybe)."), "a well known trick and or he or she maybe");
    EXPECT_EQ(text_of("THIS IS ALL SHOUTING TODAY!"), "this is all shouting today");
}

TEST(TextNormalizer, RejectsWhatCannotBeReadOut) {
    for (const std::string sentence :
         {"See http://www.debian.org for details.", "Call XYZZY about the report now.", "Un caf\xC3\xA9 au lait s'il vous plait.",
          "int main() { return 0; }", "What is the square root of 4b^2?", "It was the 1th time.", "Email me @ home # 5",
          "Bell\x07 rings here today."}) {
        EXPECT_FALSE(normalize_sentence(sentence).has_value()) << sentence;
    }
    std::string rejection;
    EXPECT_FALSE(normalize_sentence("Ask the IEEE about it.", &rejection));
    EXPECT_EQ(rejection, "acronym 'IEEE'");
}

TEST(TextNormalizer, TranscriptHasOnlyLowercaseWordsAndApostrophes) {
    const auto normalized = normalize_sentence("O'Brien's   \"rock 'n' roll\" -- at 9:00, wasn't it?");
    ASSERT_TRUE(normalized);
    EXPECT_EQ(normalized->text, "o'brien's rock n roll at nine o'clock wasn't it");
    EXPECT_EQ(normalized->words, 9);
    for (const char c : normalized->text) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == ' ' || c == '\'') << c;
}

TEST(TextNormalizer, TitlesAndInitialsDoNotEndSentences) {
    EXPECT_TRUE(is_non_terminal_abbreviation("Mr."));
    EXPECT_TRUE(is_non_terminal_abbreviation("J."));
    EXPECT_TRUE(is_non_terminal_abbreviation("e.g."));
    EXPECT_FALSE(is_non_terminal_abbreviation("etc."));
    EXPECT_FALSE(is_non_terminal_abbreviation("dog."));
}

}  // namespace
}  // namespace cadenza::speech_corpus
