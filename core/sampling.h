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

// Top-k and top-p of `sampling` (not its temperature) on a distribution that
// is already tempered, in place: outside the allowed tokens 0, the kept
// tokens renormalized. Throws cadenza::Error on invalid settings or a row
// without mass.
void keep_sampling_nucleus(const cdz_sampling& sampling, float* probabilities, int64_t count);

// `sampling` restricted to [begin, end) plus `extra` (-1: none).
cdz_sampling restrict_sampling(const cdz_sampling& sampling, int64_t begin, int64_t end, int64_t extra);

// What a target may emit after the audio start: its codes and end token, and
// with phone markers its text ids as well (text and audio ranges adjoin:
// Engine refuses a layout where they do not).
cdz_sampling restrict_sampling_to_audio(const cdz_sampling& sampling, const cdz_backbone_info& info);

// A text id emitted among the audio by a backbone with phone markers.
bool is_phone_marker(const cdz_backbone_info& info, int64_t token);

// A codec code of the backbone's audio range.
bool is_audio_token(const cdz_backbone_info& info, int64_t token);

// Draws an index by inverse CDF; mass lost to rounding goes to the last
// index with non-zero probability.
int64_t sample_index(cdz_rng& rng, const float* probabilities, int64_t count);

// sample_index(rng, row) of the row sampling_probabilities would write for
// `logits`, the same index from the same one uniform, without that row:
// with top-k or top-p the draw reads only the nucleus (a plain decoding
// step's sampling, no acceptor reading its rows). `scratch` holds `count`
// floats and is left unspecified.
int64_t sample_token(const cdz_sampling& sampling, const float* logits, float* scratch, int64_t count,
                     cdz_rng& rng);

}  // namespace cadenza
