// A guided-attention loss (Tachibana et al., DC-TTS, 2017) for a decoder-only
// TTS target: chosen heads of chosen layers are taught, while the target's
// codes are fed, to read the text near the diagonal (text position / text
// length close to frame / frames). Without it a small target trained for an
// hour on 2 cores learns codes-follow-codes but never which text it speaks.
// Training only: synthesis runs the same model with no guide.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "batch_sampler.h"
#include "speech_token_corpus.h"

namespace cadenza::training {

struct GuidedAttention {
    std::vector<int64_t> layers;  // guided layers; empty: no guide
    int64_t head = 0;             // the head guided in each of them
    double weight = 1.0;          // of the guide loss, added to the cross-entropy
    double width = 0.2;           // g: the band's width as a fraction of the text
    SpeechTokenLayout layout;     // to find the text and the target codes in a row

    bool enabled() const { return !layers.empty(); }
};

// Rows of a batch the guide applies to: the window starts with the text and
// holds the whole target, end token included.
struct GuideTargets {
    at::Tensor penalty;  // [B, T, text]: W - 1 on text keys of target queries, 0 elsewhere
    at::Tensor queries;  // [B, T] float: 1 where a target code is fed
    double query_count = 0;
};
GuideTargets guide_targets(const Batch& batch, const GuidedAttention& guide);

// Mean over guided queries and layers of the attention mass off the diagonal
// band, counting attention outside the text as off: 1 + sum_text A (W - 1),
// with W = 1 - exp(-(i/L - j/N)^2 / (2 g^2)). Zero when no row qualifies.
at::Tensor guided_attention_loss(const std::vector<at::Tensor>& attention, const GuideTargets& targets);

}  // namespace cadenza::training
