// The target's next-token distribution as a pipeline samples from it, for
// drafts trained and evaluated against what an acceptor compares them with:
// softmax(logits / temperature), cut to the smallest set of most likely
// tokens whose mass reaches top_p (the token that crosses it kept, as the
// engine's sampler keeps it), renormalized.
#pragma once

#include <string>

#include <ATen/ATen.h>

namespace cadenza::training {

struct SamplingSettings {
    double temperature = 1.0;  // > 0
    double top_p = 1.0;        // (0, 1]

    bool is_plain() const { return temperature == 1.0 && top_p >= 1.0; }
};

// Throws Error (INVALID_ARGUMENT) for settings out of range.
void check_sampling_settings(const SamplingSettings& settings);

// Rows of logits [..., V] -> probabilities [..., V]. Throws as
// check_sampling_settings.
at::Tensor sampling_distribution(const at::Tensor& logits, const SamplingSettings& settings);

// "temperature 0.7, top-p 0.9"
std::string describe(const SamplingSettings& settings);

}  // namespace cadenza::training
