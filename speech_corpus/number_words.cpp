#include "number_words.h"

#include <stdexcept>

namespace cadenza::speech_corpus {
namespace {

const char* const ones[] = {"zero",    "one",     "two",       "three",    "four",     "five",    "six",
                            "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
                            "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
const char* const tens[] = {"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};

void append(std::string& text, const std::string& word) {
    if (!text.empty()) text += ' ';
    text += word;
}

// 1 .. 999.
std::string below_thousand(unsigned number) {
    std::string text;
    if (number >= 100) {
        text = std::string(ones[number / 100]) + " hundred";
        number %= 100;
    }
    if (number >= 20) {
        append(text, tens[number / 10]);
        if (number % 10) append(text, ones[number % 10]);
    } else if (number > 0) {
        append(text, ones[number]);
    }
    return text;
}

}  // namespace

std::string cardinal_words(uint64_t number) {
    if (number == 0) return "zero";
    if (number > 999'999'999'999'999ULL) throw std::out_of_range("number too large to spell");
    static const char* const scales[] = {"", "thousand", "million", "billion", "trillion"};
    std::string text;
    uint64_t divisor = 1'000'000'000'000ULL;
    for (int scale = 4; scale >= 0; --scale, divisor /= 1000) {
        const auto group = static_cast<unsigned>(number / divisor % 1000);
        if (group == 0) continue;
        append(text, below_thousand(group));
        if (scale > 0) append(text, scales[scale]);
    }
    return text;
}

std::string ordinal_words(uint64_t number) {
    const std::string cardinal = cardinal_words(number);
    const size_t space = cardinal.rfind(' ');
    const std::string head = space == std::string::npos ? "" : cardinal.substr(0, space + 1);
    const std::string last = space == std::string::npos ? cardinal : cardinal.substr(space + 1);
    static const std::pair<const char*, const char*> irregular[] = {
        {"one", "first"}, {"two", "second"}, {"three", "third"}, {"five", "fifth"},
        {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}};
    for (const auto& [word, ordinal] : irregular)
        if (last == word) return head + ordinal;
    if (last.back() == 'y') return head + last.substr(0, last.size() - 1) + "ieth";
    return head + last + "th";
}

std::string year_words(uint64_t year) {
    if (year < 1000 || year > 9999 || (year >= 2000 && year < 2010) || year % 1000 == 0) return cardinal_words(year);
    const auto century = static_cast<unsigned>(year / 100), rest = static_cast<unsigned>(year % 100);
    const std::string first = below_thousand(century);
    if (rest == 0) return first + " hundred";
    if (rest < 10) return first + " oh " + ones[rest];
    return first + " " + below_thousand(rest);
}

std::string digit_words(const std::string& digits) {
    std::string text;
    for (const char digit : digits) {
        if (digit < '0' || digit > '9') throw std::invalid_argument("digit_words: not a digit");
        append(text, ones[digit - '0']);
    }
    return text;
}

std::string plural_number_words(const std::string& words) {
    if (words.empty()) return words;
    if (words.back() == 'y') return words.substr(0, words.size() - 1) + "ies";
    if (words.back() == 'x') return words + "es";
    return words + "s";
}

}  // namespace cadenza::speech_corpus
