#pragma once
// Which utterances the corpus holds: every dev and test sentence spoken once,
// train sentences spoken until the train split reaches its target hours.
// Voices and variations are assigned from each sentence's hash, so the plan
// is the same on every run with the same sentences, voices and seed (which is
// what lets an interrupted run resume).
#include <string>
#include <vector>

#include "corpus_manifest.h"
#include "sentence_splits.h"
#include "voice_catalog.h"
#include "voice_variations.h"

namespace cadenza::speech_corpus {

struct CorpusVoice {
    Voice voice;
    std::vector<Variation> variations;
};

struct PlannedUtterance {
    Utterance utterance;  // duration_seconds is the estimate until it is made
    std::string sentence_id;
    std::string spoken;   // what the synthesizer reads
    const CorpusVoice* voice = nullptr;
    Variation variation;
};

// Seconds of trimmed speech a sentence takes at duration factor 1, from its
// letters (fitted on this corpus's voices; docs/speech_corpus.md).
double estimated_speech_seconds(const std::string& text);

// Dev and test: each sentence once, by the voice its hash picks. Train: in
// rounds over the train sentences in hash order, each round speaking every
// sentence with the next voice, until the estimated train audio reaches
// `train_hours` (so a sentence has as many voices as the hours need, at most
// one rendering per voice). WAV paths are `<output>/wav/<voice>/<id>.wav`.
// `voices` must outlive the plan.
std::vector<PlannedUtterance> plan_corpus(const std::vector<CorpusSentence>& sentences,
                                          const std::vector<CorpusVoice>& voices, double train_hours,
                                          const std::string& output_directory);

}  // namespace cadenza::speech_corpus
