// Replacing some of the target codes a model is fed while it learns, the
// labels kept true: the common part of code_input_noise.h (random codes)
// and self_feeding.h (the model's own samples). A fed target code is a
// trained position (not prompt, not padding) that holds a code.
#pragma once

#include <cstdint>
#include <functional>

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "random_bits.h"

namespace cadenza::training {

struct FedCodeReplacement {
    double rate = 0;          // fraction of the fed target codes replaced, in [0, 1)
    int64_t code_offset = 0;  // the codes' token ids: [code_offset, code_offset + code_count)
    int64_t code_count = 0;
    uint64_t seed = 0;

    bool enabled() const { return rate > 0; }
};

// Gives the code that replaces the fed code at (row, position), drawing
// from `random` if it needs to.
using ReplacementCode = std::function<int64_t(int64_t row, int64_t position, SplitMix64& random)>;

// `inputs` ([B, T]) with each fed target code replaced, with probability
// `rate`, by `replacement`; the first position of a row (no position before
// it) is never replaced. For each fed code the draws are `random.uniform()`
// then `replacement`'s, whatever the outcome, from the stream `stream_seed`
// (derived from the settings' seed and Batch::fingerprint(), so that a
// resumed run repeats them).
at::Tensor replace_fed_codes(const at::Tensor& inputs, const Batch& batch, const FedCodeReplacement& settings,
                             uint64_t stream_seed, const ReplacementCode& replacement);

}  // namespace cadenza::training
