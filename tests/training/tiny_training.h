// The tiny model and run options the training tests share.
#pragma once

#include <cstdint>

#include "llama_config.h"
#include "token_corpus.h"
#include "train_options.h"

namespace cadenza::training {

// Vocabulary 32, width 32, 4 heads over 2 KV heads, 64 positions, tied head.
llama::LlamaConfig tiny_config(int64_t layers = 2);
// Batch 8 of 32 tokens, lr 3e-3, 10% held out, seed 1, no progress line.
TrainOptions tiny_options(int64_t steps);

// A speech-like sequence over tokens 0-9 text, 10-109 codes, 110 audio
// start, 111 end: [text 1-6][start][20 prompt codes][start] | [200 target
// codes][end], the codes a pattern that starts at `first_code`.
TokenSequence tiny_speech_sequence(int32_t first_code);

}  // namespace cadenza::training
