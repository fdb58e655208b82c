// The mel-FSQ codec's quality gate: pocketsphinx word error rates of the
// original audio, of the original log-mel through the codec's vocoder, and of
// the codec's resynthesis (encode, decode, vocoder), on one split of a speech
// corpus, with the decoding speed on one thread. Plain types: no LibTorch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "transcription_run.h"

namespace cadenza::evaluation {

struct CodecResynthesisOptions {
    std::filesystem::path model;     // codec.safetensors
    std::filesystem::path manifest;  // corpus manifest
    std::string split = "test";
    int64_t limit = 100;             // utterances, spread evenly over the split; 0: all
    int64_t griffin_lim_iterations = 32;
    double griffin_lim_power = 1.0;
    int jobs = 0;                    // recognition threads; 0: one per core
    std::filesystem::path write_audio;  // when set: every resynthesis as WAV here
    std::function<void(const std::string&)> progress;  // status lines
};

struct CodecResynthesisReport {
    recognition::ErrorReport original, mel_vocoded, resynthesized;
    double audio_seconds = 0;
    double encode_seconds = 0;   // one thread
    double decode_seconds = 0;   // codes -> log-mel -> vocoder, one thread
    double vocoder_seconds = 0;  // of decode_seconds
    int64_t distinct_codes = 0;
    int64_t codebook_size = 0;
};

CodecResynthesisReport evaluate_codec_resynthesis(const CodecResynthesisOptions& options);

}  // namespace cadenza::evaluation
