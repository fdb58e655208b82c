// The residual heads of MTP and MEDUSA on a target's last hidden state, and
// the target's own output head they share.
//
// Heads file (safetensors, written by the training tools): for i = 0..n-1
//   heads.{i}.linear.weight  [H, H]
//   heads.{i}.linear.bias    [H]
// and metadata cadenza.kind ("mtp" or "medusa"), cadenza.heads (n),
// cadenza.hidden_size (H). Head i maps the target's hidden state h (after
// its final norm) at position t to
//   h_i = h + SiLU(W_i h + b_i),   logits_i = lm_head(h_i)
// with the TARGET's lm_head, and predicts the token at t + 2 + i (the
// target's own head on h predicts t + 1).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <ATen/ATen.h>

#include "draft_support.h"

namespace cadenza::drafts {

// The target's output head [V, H]: `lm_head.weight`, or
// `model.embed_tokens.weight` when the config ties them. `checkpoint` is a
// safetensors file, an index .json or a directory, as backbone.llama takes
// it; its config.json (in the directory, or next to the file) decides the
// tying; without one, lm_head.weight is used when present.
at::Tensor load_target_head(const std::filesystem::path& checkpoint);

class DraftHeads {
public:
    // Loads the heads file and the target's head, checking that they agree
    // (hidden size, the metadata's head count). `use_heads` > 0 keeps only
    // the first that many heads (an error if the file has fewer). The file's
    // cadenza.kind is kept for the plugins to compare ("mtp" and "medusa"
    // heads share the architecture, so a mismatch is only worth a warning).
    DraftHeads(const std::filesystem::path& heads_file, const std::filesystem::path& target_checkpoint,
               int64_t use_heads = 0);
    // The same with the target's head [V, H] already at hand (a tool that
    // loaded the whole target).
    DraftHeads(const std::filesystem::path& heads_file, at::Tensor lm_head, int64_t use_heads = 0);

    int64_t count() const { return count_; }
    int64_t hidden_size() const { return hidden_; }
    int64_t vocab_size() const { return lm_head_.size(0); }
    const std::string& kind() const { return kind_; }
    const at::Tensor& lm_head() const { return lm_head_; }

    // Heads [first, first + n) applied to hidden states [..., H]: the
    // residual states h_i, [..., n, H].
    at::Tensor states(const at::Tensor& hidden, int64_t first, int64_t n) const;
    // Hidden states [..., H] to logits [..., V] through the target's head.
    at::Tensor logits(const at::Tensor& hidden) const;

    // One hidden state h [H] (not copied; it must outlive the call): logits
    // [rows, V], contiguous, of the target's own head on h when `base`
    // (row 0), then of heads 0..n-1. One matrix-vector product for all the
    // heads' linears, one product with the output head's rows in `tokens`
    // (plus one for its extra token); the other columns are left
    // uninitialized.
    at::Tensor step_logits(const float* h, bool base, int64_t n, const TokenRange& tokens) const;

private:
    at::Tensor weight_;   // [count * H, H], the heads' linears stacked
    at::Tensor bias_;     // [count * H]
    at::Tensor lm_head_;  // [V, H]
    int64_t count_ = 0, hidden_ = 0;
    std::string kind_;
};

}  // namespace cadenza::drafts
