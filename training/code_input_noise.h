// Noise on the codes a target is fed while it learns. A target trained only
// on true histories leans on the previous frames and drifts as soon as its
// own samples feed it (exposure bias); Tacotron's always-on prenet dropout
// is the cure for mel frames. Here each fed target code is replaced, with
// probability `rate`, by a uniformly drawn code; the labels stay true, so the
// model learns to predict the next frame from the text and a history with
// errors in it. Prompt codes, text and the special tokens are never touched.
// Training batches only; held-out evaluation sees clean inputs.
#pragma once

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "fed_code_replacement.h"

namespace cadenza::training {

using CodeInputNoise = FedCodeReplacement;

// The batch's inputs ([B, T]) with the noise applied. The draw is a pure
// function of (seed, the batch's tokens), so a resumed run repeats it bit for
// bit (batches are a pure function of the step).
at::Tensor noisy_inputs(const Batch& batch, const CodeInputNoise& noise);

}  // namespace cadenza::training
