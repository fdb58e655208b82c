#include "text_normalizer.h"

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "number_words.h"

namespace cadenza::speech_corpus {
namespace {

// Written with their final dot, matched case-sensitively.
const std::unordered_map<std::string, std::string>& abbreviations() {
    static const std::unordered_map<std::string, std::string> table = {
        {"Mr.", "mister"},        {"Mrs.", "missus"},        {"Ms.", "miz"},           {"Dr.", "doctor"},
        {"Prof.", "professor"},   {"Rev.", "reverend"},      {"Gen.", "general"},      {"Col.", "colonel"},
        {"Capt.", "captain"},     {"Lt.", "lieutenant"},     {"Sgt.", "sergeant"},     {"Gov.", "governor"},
        {"Sen.", "senator"},      {"Rep.", "representative"}, {"Pres.", "president"},  {"Mt.", "mount"},
        {"Messrs.", "messieurs"}, {"Jr.", "junior"},         {"Sr.", "senior"},        {"Ave.", "avenue"},
        {"Blvd.", "boulevard"},   {"vs.", "versus"},         {"etc.", "et cetera"},    {"e.g.", "for example"},
        {"i.e.", "that is"},      {"cf.", "compare"},        {"Inc.", "incorporated"}, {"Ltd.", "limited"},
        {"Corp.", "corporation"}, {"Bros.", "brothers"},     {"Co.", "company"},       {"a.m.", "a m"},
        {"p.m.", "p m"},          {"A.M.", "a m"},           {"P.M.", "p m"},          {"approx.", "approximately"},
        {"Dept.", "department"},  {"dept.", "department"},   {"Ph.D.", "p h d"},       {"Univ.", "university"},
    };
    return table;
}

// Read as a month only before a number ("Jan. 5"); "Mar." alone is a word.
const std::unordered_map<std::string, std::string>& month_abbreviations() {
    static const std::unordered_map<std::string, std::string> table = {
        {"Jan.", "january"}, {"Feb.", "february"}, {"Mar.", "march"},     {"Apr.", "april"},
        {"Jun.", "june"},    {"Jul.", "july"},     {"Aug.", "august"},    {"Sep.", "september"},
        {"Sept.", "september"}, {"Oct.", "october"}, {"Nov.", "november"}, {"Dec.", "december"},
    };
    return table;
}

// Titles and the like: followed by a name or number, never by a new sentence.
const std::unordered_set<std::string>& non_terminal_abbreviations() {
    static const std::unordered_set<std::string> table = {
        "Mr.",  "Mrs.", "Ms.",  "Dr.",  "Prof.", "Rev.", "Gen.", "Col.", "Capt.",  "Lt.",  "Sgt.", "Gov.", "Sen.",
        "Rep.", "Pres.", "Mt.", "St.",  "Messrs.", "vs.", "e.g.", "i.e.", "cf.",   "No.",  "Jan.", "Feb.", "Apr.",
        "Jun.", "Jul.", "Aug.", "Sep.", "Sept.", "Oct.", "Nov.", "Dec.", "approx.", "Univ."};
    return table;
}

// All-caps words with a known reading; any other all-caps word in a sentence
// that is not shouted throughout is an acronym we cannot read.
const std::unordered_map<std::string, std::string>& known_capitals() {
    static const std::unordered_map<std::string, std::string> table = {
        {"TV", "t v"},     {"FBI", "f b i"},   {"CIA", "c i a"},   {"IBM", "i b m"},     {"USA", "u s a"},
        {"UK", "u k"},     {"BBC", "b b c"},   {"CBS", "c b s"},   {"NBC", "n b c"},     {"ABC", "a b c"},
        {"IRS", "i r s"},  {"DNA", "d n a"},   {"PC", "p c"},      {"CPU", "c p u"},     {"MIT", "m i t"},
        {"UCLA", "u c l a"}, {"USSR", "u s s r"}, {"IQ", "i q"},  {"DJ", "d j"},        {"VIP", "v i p"},
        {"UFO", "u f o"},  {"CEO", "c e o"},   {"CD", "c d"},      {"ATM", "a t m"},     {"FAQ", "f a q"},
        {"LSD", "l s d"},  {"TNT", "t n t"},   {"VCR", "v c r"},   {"PBS", "p b s"},     {"IOU", "i o u"},
        {"NASA", "nasa"},  {"NATO", "nato"},   {"UNIX", "unix"},   {"AIDS", "aids"},     {"BASIC", "basic"},
        {"FORTRAN", "fortran"}, {"COBOL", "cobol"}, {"LASER", "laser"}, {"RADAR", "radar"}, {"OK", "okay"},
        {"UNESCO", "unesco"}};
    return table;
}

const std::unordered_set<std::string>& scale_words() {
    static const std::unordered_set<std::string> table = {"thousand", "million", "billion", "trillion"};
    return table;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }

bool all_digits(const std::string& text) {
    if (text.empty()) return false;
    for (const char c : text)
        if (!is_digit(c)) return false;
    return true;
}

std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

class Unreadable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

uint64_t parse_digits(const std::string& digits) {
    if (digits.size() > 15) throw Unreadable("number too long: " + digits);
    return std::stoull(digits);
}

// "1,000,000" -> "1000000"; empty when the commas do not group thousands.
std::string without_thousands_commas(const std::string& text) {
    if (text.find(',') == std::string::npos) return text;
    std::string digits;
    size_t group = 0;
    bool first = true;
    for (size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ',') {
            if ((first && (group < 1 || group > 3)) || (!first && group != 3)) return "";
            first = false;
            group = 0;
        } else {
            ++group;
            digits += text[i];
        }
    }
    return digits;
}

// An unsigned whole number as written: years, grouped thousands, leading zeros.
std::string integer_words(const std::string& written) {
    const std::string digits = without_thousands_commas(written);
    if (!all_digits(digits)) throw Unreadable("unreadable number '" + written + "'");
    if (digits.size() > 1 && digits[0] == '0') return digit_words(digits);
    const uint64_t value = parse_digits(digits);
    const bool year_like = written.size() == 4 && value >= 1100 && value <= 2099;
    return year_like ? year_words(value) : cardinal_words(value);
}

// "3.14" -> "three point one four", ".5" -> "point five".
std::string decimal_words(const std::string& written) {
    const size_t dot = written.find('.');
    if (dot == std::string::npos) return integer_words(written);
    const std::string whole = written.substr(0, dot), fraction = written.substr(dot + 1);
    if (!all_digits(fraction) || (!whole.empty() && !all_digits(without_thousands_commas(whole))))
        throw Unreadable("unreadable number '" + written + "'");
    std::string text = whole.empty() ? "point" : cardinal_words(parse_digits(without_thousands_commas(whole))) + " point";
    return text + " " + digit_words(fraction);
}

std::string ordinal_suffix(uint64_t value) {
    if (value % 100 >= 11 && value % 100 <= 13) return "th";
    switch (value % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
    }
}

// A token holding a digit (its surrounding punctuation already removed).
std::string number_token_words(std::string core) {
    std::string prefix;
    if (core[0] == '-' && core.size() > 1 && (is_digit(core[1]) || core[1] == '.')) {
        prefix = "minus ";
        core.erase(0, 1);
    }
    if (core.back() == '%') {
        core.pop_back();
        return prefix + decimal_words(core) + " percent";
    }
    // 10:30, 5:00
    const size_t colon = core.find(':');
    if (colon != std::string::npos) {
        const std::string hours = core.substr(0, colon), minutes = core.substr(colon + 1);
        if (!all_digits(hours) || hours.size() > 2 || !all_digits(minutes) || minutes.size() != 2 ||
            parse_digits(hours) > 24 || parse_digits(minutes) > 59)
            throw Unreadable("unreadable time or number '" + core + "'");
        const uint64_t minute = parse_digits(minutes);
        const std::string hour = cardinal_words(parse_digits(hours));
        if (minute == 0) return hour + " o'clock";
        return hour + (minute < 10 ? " oh " : " ") + cardinal_words(minute);
    }
    // 1990-1995, 3-4
    const size_t dash = core.find('-');
    if (dash != std::string::npos) {
        const std::string from = core.substr(0, dash), to = core.substr(dash + 1);
        if (!all_digits(from) || !all_digits(to)) throw Unreadable("unreadable number '" + core + "'");
        return prefix + integer_words(from) + " to " + integer_words(to);
    }
    // 1st, 22nd, 103rd, 4th
    if (core.size() >= 3) {
        const std::string suffix = lowercase(core.substr(core.size() - 2));
        const std::string digits = core.substr(0, core.size() - 2);
        if ((suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th") && all_digits(digits)) {
            const uint64_t value = parse_digits(digits);
            if (ordinal_suffix(value) != suffix) throw Unreadable("wrong ordinal suffix in '" + core + "'");
            return ordinal_words(value);
        }
    }
    // 1960s, 60s, 1800's
    for (const std::string plural : {"'s", "s"}) {
        if (core.size() > plural.size() && core.compare(core.size() - plural.size(), plural.size(), plural) == 0) {
            const std::string digits = core.substr(0, core.size() - plural.size());
            if (all_digits(digits) && digits.back() == '0' && digits[0] != '0')
                return plural_number_words(integer_words(digits));
        }
    }
    for (const char c : core)
        if (!is_digit(c) && c != ',' && c != '.') throw Unreadable("unreadable number '" + core + "'");
    return prefix + decimal_words(core);
}

// "$5" -> "five dollars", "$3.50" -> "three dollars and fifty cents",
// "$0.25" -> "twenty five cents". With `scale` ("million") the unit follows it.
std::string money_words(const std::string& amount, const std::string& scale) {
    if (amount.find_first_of("0123456789") == std::string::npos) throw Unreadable("a '$' without an amount");
    const size_t dot = amount.find('.');
    const std::string whole_written = amount.substr(0, dot);
    const std::string whole = whole_written.empty() ? "0" : without_thousands_commas(whole_written);
    if (!all_digits(whole)) throw Unreadable("unreadable amount '$" + amount + "'");
    const uint64_t dollars = parse_digits(whole);
    if (!scale.empty()) return decimal_words(amount) + " " + scale + " dollars";
    uint64_t cents = 0;
    if (dot != std::string::npos) {
        const std::string fraction = amount.substr(dot + 1);
        if (fraction.size() != 2 || !all_digits(fraction)) throw Unreadable("unreadable amount '$" + amount + "'");
        cents = parse_digits(fraction);
    }
    const std::string dollar_text = cardinal_words(dollars) + (dollars == 1 ? " dollar" : " dollars");
    const std::string cent_text = cardinal_words(cents) + (cents == 1 ? " cent" : " cents");
    if (cents == 0) return dollar_text;
    if (dollars == 0) return cent_text;
    return dollar_text + " and " + cent_text;
}

// A word of letters with apostrophes inside only ("don't", "o'clock").
bool is_plain_word(const std::string& word) {
    if (word.empty() || !is_letter(word.front()) || !is_letter(word.back())) return false;
    for (size_t i = 0; i < word.size(); ++i) {
        if (is_letter(word[i])) continue;
        if (word[i] == '\'' && is_letter(word[i - 1]) && is_letter(word[i + 1])) continue;
        return false;
    }
    return true;
}

bool is_capitalized_word(const std::string& word) {
    size_t letters = 0;
    for (const char c : word) {
        if (!is_letter(c)) continue;
        if (!is_upper(c)) return false;
        ++letters;
    }
    return letters >= 2;
}

// "U.S" (its final dot removed), "a.m", "Ph.D": letter groups of one or two
// letters joined by dots, read letter by letter.
bool is_dotted_initialism(const std::string& core) {
    if (core.find('.') == std::string::npos) return false;
    size_t group = 0;
    for (size_t i = 0; i <= core.size(); ++i) {
        if (i == core.size() || core[i] == '.') {
            if (group < 1 || group > 2) return false;
            group = 0;
        } else if (is_letter(core[i])) {
            ++group;
        } else {
            return false;
        }
    }
    return true;
}

std::string spelled_letters(const std::string& core) {
    std::string text;
    for (const char c : core) {
        if (!is_letter(c)) continue;
        if (!text.empty()) text += ' ';
        text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return text;
}

// The normalizer's output before it is joined: words and pauses.
struct Piece {
    std::string words;  // one or more words, or empty for punctuation
    char punctuation = 0;
};

class SentenceBuilder {
public:
    void add_words(const std::string& words) { pieces_.push_back({words, 0}); }
    void add_punctuation(char mark) {
        if (mark) pieces_.push_back({"", mark});
    }

    NormalizedSentence finish() const {
        NormalizedSentence result;
        char pending = 0;
        for (const auto& piece : pieces_) {
            if (piece.words.empty()) {
                if (!result.text.empty() && strength(piece.punctuation) > strength(pending)) pending = piece.punctuation;
                continue;
            }
            if (!result.text.empty()) {
                result.text += ' ';
                if (pending) result.spoken += pending;
                result.spoken += ' ';
            }
            pending = 0;
            result.text += piece.words;
            result.spoken += piece.words;
        }
        result.spoken += pending == '?' || pending == '!' ? pending : '.';
        result.words = result.text.empty() ? 0 : 1;
        for (const char c : result.text) result.words += c == ' ';
        return result;
    }

private:
    static int strength(char mark) {
        switch (mark) {
        case '?': case '!': return 3;
        case '.': return 2;
        case ',': return 1;
        default: return 0;
        }
    }
    std::vector<Piece> pieces_;
};

char pause_of(char c) {
    switch (c) {
    case '.': case '?': case '!': return c;
    case ',': case ';': case ':': case '(': case ')': case '[': case ']': case '{': case '}': return ',';
    default: return 0;
    }
}

bool is_leading_mark(char c) { return std::string_view("\"'`([{*_<").find(c) != std::string_view::npos; }
bool is_trailing_mark(char c) { return std::string_view("\"'`)]}*_>,;:.!?").find(c) != std::string_view::npos; }

// Splits the sentence into whitespace-separated tokens after setting dashes
// and ellipses apart ("yes--no" and "wait...what" are two words and a pause).
std::vector<std::string> tokenize(const std::string& sentence) {
    std::string spaced;
    for (size_t i = 0; i < sentence.size(); ++i) {
        const char c = sentence[i];
        if (c == '-' && i + 1 < sentence.size() && sentence[i + 1] == '-') {
            while (i + 1 < sentence.size() && sentence[i + 1] == '-') ++i;
            spaced += " -- ";
        } else if (c == '.' && i + 1 < sentence.size() && sentence[i + 1] == '.') {
            while (i + 1 < sentence.size() && sentence[i + 1] == '.') ++i;
            spaced += " ... ";
        } else {
            spaced += c == '\t' ? ' ' : c;
        }
    }
    std::vector<std::string> tokens;
    size_t start = 0;
    while (start < spaced.size()) {
        while (start < spaced.size() && spaced[start] == ' ') ++start;
        size_t end = start;
        while (end < spaced.size() && spaced[end] != ' ') ++end;
        if (end > start) tokens.push_back(spaced.substr(start, end - start));
        start = end;
    }
    return tokens;
}

// The core of a token without its surrounding quotes, brackets and
// punctuation, and the pauses those marks stand for.
struct Token {
    std::string core;
    std::string trailing;  // the marks after the core, in order
    char pause_before = 0;
};

Token split_token(const std::string& raw) {
    Token token;
    size_t begin = 0, end = raw.size();
    while (begin < end && is_leading_mark(raw[begin])) {
        if (pause_of(raw[begin])) token.pause_before = ',';
        ++begin;
    }
    // '%' is no mark: it belongs to the number before it.
    while (end > begin && is_trailing_mark(raw[end - 1])) --end;
    token.core = raw.substr(begin, end - begin);
    token.trailing = raw.substr(end);
    return token;
}

char strongest_pause(const std::string& marks) {
    char strongest = 0;
    for (const char c : marks) {
        const char pause = pause_of(c);
        if (pause == '?' || pause == '!') return pause;
        if (pause == '.' || (pause == ',' && !strongest)) strongest = pause;
    }
    return strongest;
}

std::string first_core(const std::vector<std::string>& tokens, size_t index) {
    return index < tokens.size() ? split_token(tokens[index]).core : std::string();
}

// The reading of `core` followed by a dot when it is an abbreviation or an
// initialism, given the next token's core; empty when it is neither.
std::string abbreviation_reading(const std::string& core, const std::string& next) {
    const std::string dotted = core + ".";
    const bool next_is_number = !next.empty() && (is_digit(next[0]) || next[0] == '$');
    if (const auto found = abbreviations().find(dotted); found != abbreviations().end()) return found->second;
    if (const auto month = month_abbreviations().find(dotted); month != month_abbreviations().end() && next_is_number)
        return month->second;
    if (dotted == "St.") return !next.empty() && is_upper(next[0]) ? "saint" : "street";
    if (dotted == "No." && next_is_number) return "number";
    if ((core.size() == 1 && is_letter(core[0])) || is_dotted_initialism(core)) return spelled_letters(core);
    return "";
}

const char* symbol_reading(const std::string& core) {
    static const std::pair<const char*, const char*> symbols[] = {
        {"&", "and"}, {"+", "plus"}, {"=", "equals"}, {"@", "at"}, {"%", "percent"}};
    for (const auto& [symbol, reading] : symbols)
        if (core == symbol) return reading;
    return nullptr;
}

// A word, possibly hyphenated ("well-known") or paired ("he/she", "and/or"),
// as its parts; a slash joins parts of two letters or more with "or".
std::vector<std::string> word_parts(const std::string& core) {
    if (lowercase(core) == "and/or") return {"and", "or"};
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t i = 0; i <= core.size(); ++i) {
        if (i < core.size() && core[i] != '-' && core[i] != '/') continue;
        const std::string part = core.substr(start, i - start);
        const bool slash = i < core.size() && core[i] == '/';
        const bool after_slash = start > 0 && core[start - 1] == '/';
        if ((slash || after_slash) && part.size() < 2) throw Unreadable("'" + core + "' is not a word");
        parts.push_back(part);
        if (slash) parts.push_back("or");
        start = i + 1;
    }
    return parts;
}

}  // namespace

bool is_non_terminal_abbreviation(const std::string& token) {
    if (token.size() == 2 && is_upper(token[0]) && token[1] == '.') return true;  // an initial: "J."
    return non_terminal_abbreviations().count(token) > 0;
}

std::optional<NormalizedSentence> normalize_sentence(const std::string& sentence, std::string* rejection) {
    try {
        for (const char c : sentence) {
            const auto byte = static_cast<unsigned char>(c);
            if (byte >= 0x80) throw Unreadable("non-ASCII text");
            if (byte < 0x20 && c != '\t') throw Unreadable("control character");
        }
        const std::vector<std::string> tokens = tokenize(sentence);
        SentenceBuilder builder;
        int alphabetic_words = 0;
        std::vector<std::string> capitalized;  // all-caps words without a known reading
        for (size_t index = 0; index < tokens.size(); ++index) {
            const std::string& raw = tokens[index];
            if (raw == "--" || raw == "-" || raw == "...") {
                builder.add_punctuation(',');
                continue;
            }
            Token token = split_token(raw);
            builder.add_punctuation(token.pause_before);
            const std::string next = first_core(tokens, index + 1);
            const std::string& core = token.core;
            std::string trailing = token.trailing;

            if (core.empty()) {
                builder.add_punctuation(strongest_pause(raw));
                continue;
            }
            // An abbreviation keeps its own dot: "Mr." "e.g." "U.S.A.".
            if (!trailing.empty() && trailing[0] == '.') {
                if (const std::string expansion = abbreviation_reading(core, next); !expansion.empty()) {
                    builder.add_words(expansion);
                    builder.add_punctuation(strongest_pause(trailing.substr(1)));
                    continue;
                }
            }
            if (core[0] == '$') {
                const std::string scale = scale_words().count(next) ? next : "";
                builder.add_words(money_words(core.substr(1), scale));
                if (!scale.empty()) trailing = split_token(tokens[++index]).trailing;
            } else if (core.find_first_of("0123456789") != std::string::npos) {
                builder.add_words(number_token_words(core));
            } else if (const char* symbol = symbol_reading(core)) {
                builder.add_words(symbol);
            } else {
                for (const auto& part : word_parts(core)) {
                    if (const auto known = known_capitals().find(part); known != known_capitals().end()) {
                        builder.add_words(known->second);
                        ++alphabetic_words;
                        continue;
                    }
                    if (!is_plain_word(part)) throw Unreadable("'" + core + "' is not a word");
                    if (part.size() >= 2) {
                        ++alphabetic_words;
                        if (is_capitalized_word(part)) capitalized.push_back(part);
                    }
                    builder.add_words(lowercase(part));
                }
            }
            builder.add_punctuation(strongest_pause(trailing));
        }
        // Shouting (mostly capitals) reads as words; a lone capitalized word
        // in ordinary text is an acronym with no known reading.
        if (!capitalized.empty() && 2 * capitalized.size() < static_cast<size_t>(alphabetic_words))
            throw Unreadable("acronym '" + capitalized.front() + "'");
        NormalizedSentence result = builder.finish();
        if (result.words == 0) throw Unreadable("no words");
        return result;
    } catch (const Unreadable& error) {
        if (rejection) *rejection = error.what();
        return std::nullopt;
    } catch (const std::out_of_range&) {
        if (rejection) *rejection = "number too large";
        return std::nullopt;
    }
}

}  // namespace cadenza::speech_corpus
