// Deepening a trained target. New decoder layers go on top of the trained
// ones with their output projections (o_proj, down_proj) at zero: each new
// layer adds nothing to the residual stream, so the grown model computes
// exactly what the trained one did and training starts from where it was,
// with more capacity (zero-initialized residual branches, as in progressive
// stacking). The other new tensors are fresh (LlamaWeights::random).
#pragma once

#include <cstdint>

#include "llama_weights.h"

namespace cadenza::training {

// `weights` with `count` more layers on top; the config's num_hidden_layers
// grows with them. Throws cadenza::Error when count < 1.
llama::LlamaWeights with_added_layers(llama::LlamaWeights weights, int64_t count, uint64_t seed);

}  // namespace cadenza::training
