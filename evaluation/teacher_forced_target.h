// How close a TTS target comes to real utterances when it is fed the truth
// (teacher forcing): each sequence of a token corpus (text, voice prompt,
// codes) runs through the target once; its most likely code at every frame
// is decoded by the codec and judged by pocketsphinx beside the true codes
// decoded the same way and the original audio. A target whose teacher-forced
// codes are not intelligible cannot speak on its own, so this tracks the
// distance to the target's gate long before sampled speech does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "transcription_run.h"

namespace cadenza::evaluation {

struct TeacherForcedOptions {
    std::filesystem::path target;    // model directory (config.json, model.safetensors)
    std::filesystem::path codec;     // mel-FSQ codec (.safetensors)
    std::filesystem::path tokens;    // a split's token corpus (corpus tts)
    std::filesystem::path prompts;   // its <split>_prompts.tsv: row k names line k's utterance
    std::filesystem::path layout;    // layout.json
    std::filesystem::path manifest;  // the speech corpus: texts and original audio
    int64_t limit = 20;              // the first N sequences; 0: all
    int threads = 1;                 // for the target and the codec
    int jobs = 0;                    // recognition threads; 0: one per core
    std::filesystem::path write_audio;  // when set: predicted and true decodings as WAV
    std::function<void(const std::string&)> progress;
};

struct TeacherForcedReport {
    int64_t frames = 0;                 // target codes scored
    double cross_entropy = 0;           // nats per code
    double accuracy = 0;                // the most likely code is the true one
    // Mean over frames of the L1 distance, summed over the FSQ dimensions
    // (each in [-1, 1]), from the true code's latent: of the most likely code,
    // and of the previous true code (the baseline of no prediction).
    double latent_distance = 0, previous_code_distance = 0;
    recognition::ErrorReport original, true_codes, predicted_codes;
};

// Throws cadenza::Error or std::runtime_error naming the file at fault.
TeacherForcedReport evaluate_teacher_forced(const TeacherForcedOptions& options);

}  // namespace cadenza::evaluation
