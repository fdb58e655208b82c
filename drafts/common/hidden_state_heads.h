// The residual heads of MTP and MEDUSA on a target's last hidden state, and
// the target's own output head they share (and its input embedding, which
// the recurrent draft reads).
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
//
// Code-digit heads (metadata cadenza.output = "code_digits", with
// cadenza.code_levels, e.g. "8,8,8,4,4", and cadenza.code_offset): head i
// has its own small output head instead of the target's,
//   heads.{i}.digits.weight [R, H], heads.{i}.digits.bias [R]
// (code_digit_head.h: R = the non-code tokens + 1 + the sum of the levels),
// and its logits over the vocabulary are the log-probabilities of the
// product distribution. Without cadenza.output (or with "vocabulary") the
// heads use the target's lm_head as above.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "code_digit_head.h"
#include "draft_support.h"
#include "panel_weights.h"

namespace cadenza::safetensors {
class File;
}

namespace cadenza::drafts {

// The target's output head [V, H]: `lm_head.weight`, or
// `model.embed_tokens.weight` when the config ties them. `checkpoint` is a
// safetensors file, an index .json or a directory, as backbone.llama takes
// it; its config.json (in the directory, or next to the file) decides the
// tying; without one, lm_head.weight is used when present.
at::Tensor load_target_head(const std::filesystem::path& checkpoint);
// Whether the target's output head is its input embedding (no lm_head.weight,
// or tie_word_embeddings in the config beside it): one matrix serves both.
bool target_head_is_tied(const std::filesystem::path& checkpoint);
// The target's input embedding [V, H] (`model.embed_tokens.weight`), from the same kinds of checkpoint.
at::Tensor load_target_embedding(const std::filesystem::path& checkpoint);

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
    // The code grid of code-digit heads; nullptr for heads on the target's lm_head.
    const CodeDigitDistribution* code_digits() const { return digits_ ? &*digits_ : nullptr; }
    // How Step::probabilities applies the sampling settings to code-digit heads.
    void set_digit_sampling(DigitSampling sampling) {
        if (digits_) digits_->set_sampling(sampling);
    }

    // Heads [first, first + n) applied to hidden states [..., H]: the
    // residual states h_i, [..., n, H].
    at::Tensor states(const at::Tensor& hidden, int64_t first, int64_t n) const;
    // Hidden states [..., H] to logits [..., V] through the target's head.
    at::Tensor logits(const at::Tensor& hidden) const;
    // Head `head`'s states [..., H] (from states()) to its logits [..., V]:
    // the target's head, or the code-digit head's log-probabilities.
    at::Tensor head_logits(int64_t head, const at::Tensor& states) const;

    // The rows of one step on one hidden state h [H] (not copied; it must
    // outlive the call): the target's own head on h when `base` (row 0),
    // then heads 0..n-1. One matrix-vector product for all the heads'
    // linears; the target's head only for `tokens` (the others' logits are
    // left uninitialized), a code-digit head for its R rows. Raw rows through
    // the small-m kernel (llama::small_matmul_rows), or the panels of
    // pack_panels: no LibTorch operator. The second form reuses `into`'s
    // buffers (a drafter keeps one Step per session: a step allocates
    // nothing once they have their size).
    class Step;
    Step step(const float* h, bool base, int64_t n, const TokenRange& tokens) const;
    void step(const float* h, bool base, int64_t n, const TokenRange& tokens, Step& into) const;

    // Holds the heads' linears and the target's head as panels
    // (llama::PanelMatrix) in `precision` (float32 or float16), which
    // step() then reads instead of the row-major matrices: a step's
    // matrix-vector products stream one panel after another, and float16
    // halves their bytes (each weight rounded to the nearest float16, the
    // sums float32's: a float16 base row is not the target's own to the
    // bit). Only where a vectorized kernel runs (llama::combine_rows_vectorized());
    // returns false, and changes nothing, elsewhere.
    bool pack_panels(llama::PanelPrecision precision);

private:
    void load_output_heads(const safetensors::File& file, const std::string& where);

    at::Tensor weight_;   // [count * H, H], the heads' linears stacked
    at::Tensor bias_;     // [count * H]
    at::Tensor lm_head_;  // [V, H]
    std::optional<CodeDigitDistribution> digits_;
    at::Tensor digit_weight_;  // [count, R, H]
    at::Tensor digit_bias_;    // [count, R]
    std::optional<llama::PanelMatrix> linear_panels_, head_panels_;  // pack_panels
    int64_t count_ = 0, hidden_ = 0;
    std::string kind_;
};

class DraftHeads::Step {
public:
    int64_t rows() const { return rows_; }
    // Row r's logits over the vocabulary [V] (log-probabilities for a
    // code-digit head), valid until the Step is destroyed or filled again.
    const float* logits(int64_t r);
    // Row r's draft distribution under `sampling` into `out` [V]: the host's
    // sampling of its logits, or a code-digit head's factor by factor
    // (CodeDigitDistribution::fill_probabilities), which costs no
    // vocabulary-wide sampling.
    void probabilities(int64_t r, const cdz_sampling* sampling, float* out);

private:
    friend class DraftHeads;
    bool digit_row(int64_t r) const { return !digit_rows_.empty() && r >= first_digit_row_; }

    const DraftHeads* heads_ = nullptr;
    int64_t rows_ = 0, first_digit_row_ = 0;
    std::vector<float> logits_;      // [rows, V]: rows on the target's head; a code-digit head's, once asked for
    std::vector<float> digit_rows_;  // [n, R]: the code-digit heads' logits
    std::vector<bool> filled_;
    std::vector<float> scratch_;
    std::vector<float> states_, exp_negative_;  // [rows, H], [n, H]: step()'s, kept for the next
};

}  // namespace cadenza::drafts
