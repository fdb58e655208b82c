// Batches of token windows for training and evaluation.
//
// A window is seq_len + 1 consecutive tokens of one sequence: the first
// seq_len are fed, and the token `ahead` positions after each fed position is
// its label when it belongs to the target segment (prompt tokens and padding
// are never labels). Sequences shorter than the window are padded at the end
// (causal attention keeps the padding from touching real positions); a batch
// is trimmed to its longest window.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "token_corpus.h"

namespace cadenza::training {

constexpr int64_t ignore_label = -100;

struct Batch {
    at::Tensor tokens;   // [B, T + 1] int64, padding 0
    at::Tensor trained;  // [B, T + 1] bool: a target-segment token (not prompt, not padding)
    at::Tensor real;     // [B, T + 1] bool: not padding
    int64_t sequences = 0;

    int64_t time() const { return tokens.size(1) - 1; }
    at::Tensor inputs() const { return tokens.slice(1, 0, time()); }  // [B, T]
    // [B, T]: tokens[b, t + ahead] where that is a trained token, else ignore_label.
    at::Tensor labels(int64_t ahead = 1) const;
    int64_t input_tokens() const;  // real tokens fed
    // FNV-1a over the tokens: seeds per-batch draws (input noise, text
    // dropout) that repeat on resume.
    uint64_t fingerprint() const;
};

// Training batches, a pure function of (seed, step): a resumed run sees the
// same batches as an uninterrupted one without saving sampler state. Each
// row is a uniformly chosen sequence (with replacement) and, when it is
// longer than the window, a uniformly chosen window of it. With
// `length_buckets`, a step first draws one sequence and then the whole batch
// from its neighbours in length order (the 16 * batch nearest), so that rows
// of very different lengths seldom share a batch and little of it is padding.
class BatchSampler {
public:
    BatchSampler(std::vector<const TokenSequence*> sequences, int64_t batch, int64_t seq_len, uint64_t seed,
                 bool length_buckets = false);
    Batch at_step(int64_t step) const;

private:
    std::vector<const TokenSequence*> sequences_;  // in length order with length_buckets
    bool length_buckets_;
    int64_t batch_, seq_len_;
    uint64_t seed_;
};

// Every sequence cut into windows starting at 0, seq_len, 2 seq_len, ... (so
// each token after a sequence's first is a label exactly once), `batch`
// windows at a time.
std::vector<Batch> evaluation_batches(const std::vector<const TokenSequence*>& sequences, int64_t batch,
                                      int64_t seq_len);

}  // namespace cadenza::training
