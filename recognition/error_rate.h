#pragma once
// Word and character error rates from a Levenshtein alignment of a reference
// and a hypothesis, after the same scoring normalization of both.
#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::recognition {

// What the alignment of one hypothesis (or many, summed) against its reference
// counts, in words or in characters.
struct EditCounts {
    int64_t substitutions = 0;
    int64_t deletions = 0;         // reference units missing from the hypothesis
    int64_t insertions = 0;        // hypothesis units not in the reference
    int64_t reference_length = 0;  // units of the reference

    int64_t errors() const { return substitutions + deletions + insertions; }
    // errors / reference_length. An empty reference gives 0 when the
    // hypothesis is empty too and 1 otherwise.
    double rate() const;
    EditCounts& operator+=(const EditCounts& other);
};

// Lowercase (ASCII), punctuation replaced by spaces except apostrophes inside
// words ("don't" stays, "'quoted'" loses them; U+2019 counts as one),
// whitespace collapsed to single spaces, no leading or trailing space. Digits
// are kept: references are expected to spell numbers out.
std::string normalize_for_scoring(const std::string& text);

// Splits on single spaces; expects normalized text.
std::vector<std::string> split_words(const std::string& normalized);

// The fewest substitutions + deletions + insertions turning `reference` into
// `hypothesis`; among equally short alignments, the one that matches the most
// units (fewest substitutions), so that counts are reproducible.
template <typename Unit>
EditCounts align(const std::vector<Unit>& reference, const std::vector<Unit>& hypothesis);

// Both sides are normalized first. Words are split on spaces; characters are
// the Unicode code points of the normalized text, the spaces between words
// included (so a split or merged word costs one character).
EditCounts word_errors(const std::string& reference, const std::string& hypothesis);
EditCounts character_errors(const std::string& reference, const std::string& hypothesis);

}  // namespace cadenza::recognition
