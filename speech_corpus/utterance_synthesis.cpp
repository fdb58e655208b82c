#include "utterance_synthesis.h"

#include <filesystem>
#include <stdexcept>

#include "festival_voice.h"
#include "utterance_audio.h"

namespace cadenza::speech_corpus {

UtteranceSynthesizer::UtteranceSynthesizer(std::string work_directory) : work_directory_(std::move(work_directory)) {}

UtteranceOutcome UtteranceSynthesizer::write_corpus_audio(const PlannedUtterance& utterance,
                                                          const audio::Waveform& synthesized) {
    UtteranceOutcome outcome;
    const audio::Waveform trimmed = trim_silence(
        change_playback_speed(synthesized, utterance.variation.playback_speed(), corpus_sample_rate));
    if (trimmed.samples.empty()) {
        outcome.error = "the synthesizer produced only silence";
        return outcome;
    }
    std::filesystem::create_directories(std::filesystem::path(utterance.utterance.path).parent_path());
    audio::write_waveform(utterance.utterance.path, trimmed);
    outcome.duration_seconds = trimmed.duration_seconds();
    return outcome;
}

void UtteranceSynthesizer::synthesize(const std::vector<const PlannedUtterance*>& batch,
                                      const std::function<void(size_t, const UtteranceOutcome&)>& report) {
    if (batch.empty()) return;
    const Voice& voice = batch.front()->voice->voice;
    for (const auto* utterance : batch)
        if (utterance->voice->voice.name != voice.name)
            throw std::invalid_argument("a synthesis batch must hold one voice");

    if (voice.engine == SynthesisEngine::flite) {
        for (size_t i = 0; i < batch.size(); ++i) {
            UtteranceOutcome outcome;
            try {
                outcome = write_corpus_audio(*batch[i], flite_.synthesize(voice.engine_voice, batch[i]->spoken,
                                                                          batch[i]->variation.synthesizer_stretch()));
            } catch (const std::exception& error) {
                outcome.error = error.what();
            }
            report(i, outcome);
        }
        return;
    }

    std::filesystem::create_directories(work_directory_);
    std::vector<FestivalRequest> requests;
    for (size_t i = 0; i < batch.size(); ++i) {
        FestivalRequest request;
        request.text = batch[i]->spoken;
        request.duration_stretch = batch[i]->variation.synthesizer_stretch();
        request.output_path = (std::filesystem::path(work_directory_) / ("raw-" + std::to_string(i) + ".wav")).string();
        requests.push_back(request);
    }
    const std::vector<std::string> errors = synthesize_with_festival(voice.engine_voice, requests, work_directory_);
    for (size_t i = 0; i < batch.size(); ++i) {
        UtteranceOutcome outcome;
        outcome.error = errors[i];
        if (outcome.error.empty()) {
            try {
                outcome = write_corpus_audio(*batch[i], audio::read_waveform(requests[i].output_path));
            } catch (const std::exception& error) {
                outcome.error = error.what();
            }
        }
        std::error_code ignored;
        std::filesystem::remove(requests[i].output_path, ignored);
        report(i, outcome);
    }
}

}  // namespace cadenza::speech_corpus
