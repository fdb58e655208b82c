// The tiny model and run options the training tests share.
#pragma once

#include <cstdint>

#include "llama_config.h"
#include "train_options.h"

namespace cadenza::training {

// Vocabulary 32, width 32, 4 heads over 2 KV heads, 64 positions, tied head.
llama::LlamaConfig tiny_config(int64_t layers = 2);
// Batch 8 of 32 tokens, lr 3e-3, 10% held out, seed 1, no progress line.
TrainOptions tiny_options(int64_t steps);

}  // namespace cadenza::training
