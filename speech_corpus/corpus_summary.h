#pragma once
// `corpus.json`: what a speech corpus holds (hours and counts per split,
// voice and variation), how it was made (command, seed, voices) and how long
// making it took.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "corpus_generation.h"
#include "corpus_plan.h"
#include "fortune_sentences.h"

namespace cadenza::speech_corpus {

struct SpeechTotals {
    size_t utterances = 0;
    double seconds = 0.0;
    double hours() const { return seconds / 3600.0; }
};

struct CorpusSummary {
    std::string command;
    uint64_t seed = 0;
    double train_hours_target = 0.0;
    std::string fortunes_directory;
    int jobs = 0;
    SentenceExtraction extraction;                     // counts only; sentences not used
    std::map<std::string, size_t> sentences_by_split;  // available sentences
    std::map<std::string, size_t> spoken_sentences_by_split;
    std::vector<CorpusVoice> voices;
    std::vector<Voice> missing_voices;
    std::map<std::string, SpeechTotals> by_split;
    std::map<std::string, std::map<std::string, SpeechTotals>> by_voice_and_split;
    std::map<std::string, std::map<std::string, SpeechTotals>> by_voice_and_variation;
    GenerationReport generation;  // utterances not kept
    size_t stray_wav_files = 0;   // under wav/ but not in the plan
    bool stray_wav_files_deleted = false;
};

// Fills the totals from the utterances made.
void tally_utterances(CorpusSummary& summary, const std::vector<Utterance>& utterances);

void write_corpus_summary(const std::string& path, const CorpusSummary& summary);

}  // namespace cadenza::speech_corpus
