#pragma once
// Speaks planned utterances and writes their corpus WAV files and phone
// alignments (phone_alignment.h): the voice's
// synthesizer with the variation's duration stretch, then the playback-speed
// change, 16 kHz and silence trimming (utterance_audio.h). Holds flite's
// voices, so one instance belongs to one thread (a worker process).
#include <functional>
#include <string>
#include <vector>

#include "corpus_plan.h"
#include "flite_voice.h"

namespace cadenza::speech_corpus {

struct UtteranceOutcome {
    double duration_seconds = 0.0;  // of the written file
    std::string error;              // empty when the file was written
};

class UtteranceSynthesizer {
public:
    // Festival's scripts and raw output go to `work_directory`.
    explicit UtteranceSynthesizer(std::string work_directory);

    // Speaks utterances of one voice; `report` gets each outcome as soon as
    // it is known, with the utterance's position in `batch`.
    void synthesize(const std::vector<const PlannedUtterance*>& batch,
                    const std::function<void(size_t, const UtteranceOutcome&)>& report);

private:
    UtteranceOutcome write_corpus_audio(const PlannedUtterance& utterance, const audio::Waveform& synthesized,
                                        const std::vector<PhoneSegment>& segments);

    std::string work_directory_;
    FliteSynthesizer flite_;
};

}  // namespace cadenza::speech_corpus
