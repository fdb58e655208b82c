#pragma once
// English number names as the corpus speaks them: lowercase words separated
// by single spaces, no hyphens and no "and" ("twenty one", "one hundred one").
#include <cstdint>
#include <string>

namespace cadenza::speech_corpus {

// 0 .. 999,999,999,999,999; throws std::out_of_range beyond.
std::string cardinal_words(uint64_t number);

// "first", "twenty second", "one hundredth".
std::string ordinal_words(uint64_t number);

// A year read in pairs: 1984 "nineteen eighty four", 1900 "nineteen hundred",
// 1905 "nineteen oh five", 2005 "two thousand five", 2010 "twenty ten".
std::string year_words(uint64_t year);

// Digits one by one: "007" -> "zero zero seven".
std::string digit_words(const std::string& digits);

// The plural of a number's last word: "twenty" -> "twenties", "six" -> "sixes".
std::string plural_number_words(const std::string& words);

}  // namespace cadenza::speech_corpus
