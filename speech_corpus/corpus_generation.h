#pragma once
// Makes the corpus's audio: every planned utterance whose WAV file is not
// already there, in parallel worker processes (flite is not thread safe;
// processes also contain a synthesizer crash to the sentence that caused it).
// Resumable: a WAV file with a valid header counts as done, and files appear
// atomically, so an interrupted run loses at most the utterances in flight.
#include <ostream>
#include <string>
#include <vector>

#include "corpus_manifest.h"
#include "corpus_plan.h"

namespace cadenza::speech_corpus {

struct GenerationOptions {
    int jobs = 1;                  // worker processes
    size_t batch_size = 16;        // utterances of one voice handed to a worker at once
    std::string work_directory;    // festival's scripts and raw audio, removed at the end
    std::string manifest_path;     // rewritten every `checkpoint_every` new utterances
    size_t checkpoint_every = 500;
    std::ostream* progress = nullptr;  // progress and error lines; none when null
    bool progress_on_terminal = false;
};

struct GenerationReport {
    size_t planned = 0;
    size_t reused = 0;     // already on disk
    size_t generated = 0;  // made by this run
    size_t failed = 0;
    double reused_audio_seconds = 0.0;
    double generated_audio_seconds = 0.0;
    double wall_seconds = 0.0;
    std::vector<std::string> errors;   // the first few, "voice, sentence id: reason"
    std::vector<Utterance> utterances; // every utterance with a WAV file, in plan order, real durations
};

GenerationReport generate_corpus_audio(const std::vector<PlannedUtterance>& plan, const GenerationOptions& options);

}  // namespace cadenza::speech_corpus
