#pragma once
// Sentences from fortune(6) files: entries separated by lines holding only
// '%'. Attributions ("-- Mark Twain"), speaker labels ("Q:"), quotes and
// line wrapping are removed; what is left is split into sentences and
// normalized (text_normalizer.h).
#include <string>
#include <vector>

#include "text_normalizer.h"

namespace cadenza::speech_corpus {

// The entries of a fortune file, each its text between '%' lines.
std::vector<std::string> fortune_entries(const std::string& file_text);

// An entry's prose as paragraphs, wrapped lines joined by single spaces.
// A paragraph ends at a blank line, an attribution, a speaker label, or an
// indented line that follows a finished sentence.
std::vector<std::string> fortune_paragraphs(const std::string& entry);

// Splits a paragraph after '.', '?' or '!' when the next word starts with a
// capital letter or a digit, except after titles and initials ("Mr.", "J.").
std::vector<std::string> split_sentences(const std::string& paragraph);

// The fortune files of a directory: plain files only, sorted by name (no
// .dat index or .u8 copy, no subdirectory such as the offensive `off/`).
std::vector<std::string> fortune_files(const std::string& directory);

struct SentenceExtraction {
    std::vector<NormalizedSentence> sentences;  // unique by text, in file order
    int files = 0;
    int entries = 0;
    int candidates = 0;   // sentences found before normalization
    int unreadable = 0;   // rejected by the normalizer
    int wrong_length = 0; // fewer than min_words or more than max_words words
    int duplicates = 0;
};

// Reads every file, keeps the normalized sentences with min_words to
// max_words words, the first of each text only.
SentenceExtraction extract_fortune_sentences(const std::vector<std::string>& files, int min_words = 4,
                                             int max_words = 25);

}  // namespace cadenza::speech_corpus
