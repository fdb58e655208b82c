// Self-feeding (one-pass parallel scheduled sampling, Duckworth et al. 2019)
// against exposure bias: a target trained only on true histories meets its
// own samples at synthesis and drifts. Each training batch is first run
// without gradients; at each fed target code the code the model itself
// would have sampled there (temperature 1, over the codes only) replaces the
// true one with probability `rate`, and the batch is run again, with
// gradients, on that mixed history; the labels stay true. Unlike random
// noise (code_input_noise.h) the replacements are the model's own likely
// mistakes. Training batches only; held-out evaluation sees true histories.
#pragma once

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "fed_code_replacement.h"

namespace cadenza::training {

using SelfFeeding = FedCodeReplacement;

// `inputs` ([B, T]) with some fed target codes replaced by codes sampled from
// `logits` ([B, T, V], the model's no-gradient pass over `inputs`): position
// t + 1 takes the sample from the logits at t. A pure function of (seed,
// batch, logits), so a resumed run repeats it.
at::Tensor self_fed_inputs(const at::Tensor& inputs, const at::Tensor& logits, const Batch& batch,
                           const SelfFeeding& feeding);

}  // namespace cadenza::training
