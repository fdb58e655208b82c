// Temperature, top-k and top-p, applied the same way to target and draft
// distributions before any acceptance rule sees them.
#pragma once

#include <cstdint>

#include "cadenza/plugin.h"

namespace cadenza {

// Writes a distribution over `count` entries. Temperature 0 is greedy: all
// mass on the first argmax. Throws cadenza::Error on invalid settings.
void sampling_probabilities(const cdz_sampling& sampling, const float* logits, float* probabilities,
                            int64_t count);

// `sampling` restricted to [begin, end) plus `extra` (-1: none).
cdz_sampling restrict_sampling(const cdz_sampling& sampling, int64_t begin, int64_t end, int64_t extra);

// Draws an index by inverse CDF; mass lost to rounding goes to the last
// index with non-zero probability.
int64_t sample_index(cdz_rng& rng, const float* probabilities, int64_t count);

}  // namespace cadenza
