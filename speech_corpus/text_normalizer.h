#pragma once
// Turns one written English sentence into the words a synthesizer should say
// and the transcript the corpus stores. Numbers, money, percentages, years,
// ordinals, times, `&` and common abbreviations are spelled out; everything
// is lowercased. A sentence that still holds something unreadable (a URL, code,
// an acronym with no known reading, non-ASCII text) is rejected, not guessed.
#include <optional>
#include <string>

namespace cadenza::speech_corpus {

struct NormalizedSentence {
    // The transcript: lowercase words of letters and apostrophes separated by
    // single spaces, nothing else ("it's ten percent off").
    std::string text;
    // What the synthesizer reads: the same words with the punctuation that
    // shapes prosody (, . ? !), ending in . ? or ! ("it's ten percent off!").
    std::string spoken;
    int words = 0;
};

// nullopt when the sentence cannot be read out unambiguously; `rejection`
// (when given) then says why.
std::optional<NormalizedSentence> normalize_sentence(const std::string& sentence, std::string* rejection = nullptr);

// True when a token ending in '.' is an abbreviation or initial that does not
// end a sentence ("Mr.", "Dr.", "e.g.", "J."), for the sentence splitter.
bool is_non_terminal_abbreviation(const std::string& token);

}  // namespace cadenza::speech_corpus
