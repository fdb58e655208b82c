// Training of the mel-FSQ codec (codecs/mel_fsq) on a speech corpus: random
// crops of normalized log-mel, L1 reconstruction through the FSQ bottleneck
// (plus an optional latent smoothness penalty), AdamW with warmup + cosine,
// checkpoints that resume bit for bit. Held out: the dev L1, the codes used,
// and how far the codes move from frame to frame.
//
// Output directory: codec.safetensors (the codec, loadable by codec.mel_fsq)
// and training_state.safetensors (weights, AdamW moments, step, settings).
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "train_options.h"
#include "train_result.h"

namespace cadenza::training {

struct MelCodecJob {
    std::filesystem::path manifest;  // speech corpus manifest (speech_corpus/corpus_manifest.h)
    std::filesystem::path output;    // directory
    int64_t width = 256;
    int64_t encoder_blocks = 4;
    int64_t decoder_blocks = 6;
    std::string levels = "8,8,8,4,4";
    int64_t max_utterances = 0;      // of the train split; 0: all
    // Weight of a penalty on the bounded latent's change from frame to frame
    // (mean absolute difference, in FSQ digit steps), added to the L1: codes
    // that move less between frames are easier for a TTS target to predict.
    double latent_smoothness = 0;
    // A trained codec (.safetensors) to start from instead of random weights;
    // its architecture must be the one these options describe, and its
    // log-mel statistics are kept.
    std::filesystem::path init_from;
    TrainOptions options;            // seq_len: frames per crop; batch: crops per step
};

// Prints a summary to `out` (and progress to `log`). Throws on bad options,
// an unreadable corpus, or a checkpoint mismatch.
TrainResult run_mel_codec_job(const MelCodecJob& job, std::ostream& out, std::ostream& log);

}  // namespace cadenza::training
