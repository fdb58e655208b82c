#include "utterance_synthesis.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "festival_voice.h"
#include "utterance_audio.h"

namespace cadenza::speech_corpus {

UtteranceSynthesizer::UtteranceSynthesizer(std::string work_directory) : work_directory_(std::move(work_directory)) {}

UtteranceOutcome UtteranceSynthesizer::write_corpus_audio(const PlannedUtterance& utterance,
                                                          const audio::Waveform& synthesized,
                                                          const std::vector<PhoneSegment>& segments) {
    UtteranceOutcome outcome;
    const double playback_speed = utterance.variation.playback_speed();
    const audio::Waveform played = change_playback_speed(synthesized, playback_speed, corpus_sample_rate);
    const SampleRange kept = silence_trim_range(played);
    if (kept.end <= kept.begin) {
        outcome.error = "the synthesizer produced only silence";
        return outcome;
    }
    const audio::Waveform trimmed = samples_in(played, kept);
    if (segments.empty()) {
        outcome.error = "the synthesizer reported no phones";
        return outcome;
    }
    std::filesystem::create_directories(std::filesystem::path(utterance.utterance.path).parent_path());
    // The phones first: a WAV file marks the utterance done.
    write_phone_alignment(phone_alignment_path(utterance.utterance.path),
                          to_corpus_timeline(segments, playback_speed,
                                             static_cast<double>(kept.begin) / corpus_sample_rate,
                                             trimmed.duration_seconds()));
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
                std::vector<PhoneSegment> segments;
                const audio::Waveform wave = flite_.synthesize(voice.engine_voice, batch[i]->spoken,
                                                               batch[i]->variation.synthesizer_stretch(), &segments);
                outcome = write_corpus_audio(*batch[i], wave, segments);
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
        request.segments_path =
            (std::filesystem::path(work_directory_) / ("raw-" + std::to_string(i) + ".segs")).string();
        requests.push_back(request);
    }
    const std::vector<std::string> errors = synthesize_with_festival(voice.engine_voice, requests, work_directory_);
    for (size_t i = 0; i < batch.size(); ++i) {
        UtteranceOutcome outcome;
        outcome.error = errors[i];
        if (outcome.error.empty()) {
            try {
                std::ifstream segments_file(requests[i].segments_path);
                std::ostringstream segments_text;
                segments_text << segments_file.rdbuf();
                outcome = write_corpus_audio(
                    *batch[i], audio::read_waveform(requests[i].output_path),
                    parse_festival_segments(segments_text.str(), requests[i].segments_path));
            } catch (const std::exception& error) {
                outcome.error = error.what();
            }
        }
        std::error_code ignored;
        std::filesystem::remove(requests[i].output_path, ignored);
        std::filesystem::remove(requests[i].segments_path, ignored);
        report(i, outcome);
    }
}

}  // namespace cadenza::speech_corpus
