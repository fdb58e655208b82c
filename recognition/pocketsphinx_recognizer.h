#pragma once
// One pocketsphinx decoder (the Debian 0.8+5prealpha API) turning mono audio
// into lowercase words: the judge that scores synthesized speech by word error
// rate (docs/recognition.md).
//
// Not thread safe: an instance decodes one utterance at a time. To decode in
// parallel, give each thread its own instance (transcription_run.h does).
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cadenza::recognition {

// Where Debian's pocketsphinx-en-us package installs the US English model.
inline const char* const default_model_directory = "/usr/share/pocketsphinx/model/en-us/en-us";
inline const char* const default_dictionary = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";
inline const char* const default_language_model = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";

// A pocketsphinx command-line setting, e.g. {"-beam", "1e-60"}.
using DecoderSetting = std::pair<std::string, std::string>;

struct RecognizerSettings {
    std::string model_directory = default_model_directory;  // the acoustic model (-hmm)
    std::string dictionary = default_dictionary;            // pronunciations (-dict)
    std::string language_model = default_language_model;   // n-gram model (-lm)
    // On top of pocketsphinx's defaults, which measured best for the cost
    // (docs/recognition.md); e.g. {{"-lw", "5.5"}}.
    std::vector<DecoderSetting> decoder_settings;
};

class PocketsphinxRecognizer {
public:
    static constexpr int model_sample_rate = 16000;

    // Throws std::runtime_error naming the missing or unloadable file (and the
    // package to install when a default path is missing).
    explicit PocketsphinxRecognizer(const RecognizerSettings& settings = {});
    ~PocketsphinxRecognizer();
    PocketsphinxRecognizer(const PocketsphinxRecognizer&) = delete;
    PocketsphinxRecognizer& operator=(const PocketsphinxRecognizer&) = delete;

    // The words recognized in one utterance of mono audio at any sample rate
    // (resampled to 16 kHz), separated by single spaces; empty for silence.
    // Samples are nominally in [-1, 1]; louder ones are clipped.
    std::string transcribe(const std::vector<float>& samples, int sample_rate);

private:
    struct Decoder;
    std::unique_ptr<Decoder> decoder_;
};

// Mono float samples as 16-bit PCM: scaled by 32767, rounded, clipped.
std::vector<short> to_pcm16(const std::vector<float>& samples);

}  // namespace cadenza::recognition
