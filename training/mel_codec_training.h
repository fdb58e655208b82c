// Training of the mel-FSQ codec (codecs/mel_fsq) on a speech corpus: random
// crops of normalized log-mel, L1 reconstruction through the FSQ bottleneck,
// AdamW with warmup + cosine, checkpoints that resume bit for bit.
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
    TrainOptions options;            // seq_len: frames per crop; batch: crops per step
};

// Prints a summary to `out` (and progress to `log`). Throws on bad options,
// an unreadable corpus, or a checkpoint mismatch.
TrainResult run_mel_codec_job(const MelCodecJob& job, std::ostream& out, std::ostream& log);

}  // namespace cadenza::training
