#pragma once
// The whole of `cadenza corpus speech`: sentences from the fortune files,
// splits, voices and variations, the plan, the audio, and the files that
// describe the result (manifest.tsv, sentences.tsv, corpus.json).
#include <cstdint>
#include <ostream>
#include <string>

#include "corpus_summary.h"

namespace cadenza::speech_corpus {

struct SpeechCorpusOptions {
    std::string output;                                   // the corpus directory
    std::string fortunes_directory = "/usr/share/games/fortunes";
    double train_hours = 10.0;
    int jobs = 1;
    uint64_t seed = 1;
    int limit_sentences = 0;   // > 0: at most this many sentences per split
    std::string voices;        // comma-separated names; empty: every installed voice
    int variations_per_voice = 4;
    size_t batch_size = 16;
    bool prune = false;        // delete WAV files under wav/ that the plan does not hold
    std::string command_line;  // recorded in corpus.json
    std::ostream* log = nullptr;  // what was found, progress, skipped utterances
    bool log_is_terminal = false;
};

// Throws std::invalid_argument for a problem with the options (an unknown or
// missing voice, no sentences, nothing installed) and std::runtime_error when
// making the corpus fails (including every utterance failing).
CorpusSummary build_speech_corpus(const SpeechCorpusOptions& options);

}  // namespace cadenza::speech_corpus
