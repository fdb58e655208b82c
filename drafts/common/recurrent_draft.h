// The recurrent draft (after ReDrafter, Cheng et al., "Recurrent Drafter for
// Fast Speculative Decoding in Large Language Models", 2024): one small cell
// that walks forward from the target's last hidden state, reading at each
// step the token it has just reached. Where an MTP or MEDUSA head must guess
// token t + 2 from h_t without knowing which token t + 1 the target sampled,
// the cell reads that token first:
//   s_0 = h_t                    (the target's hidden state after its final norm)
//   s_k = s_{k-1} + W_out SiLU(W_state s_{k-1} + W_token e(x_{t+k}) + b)
//   q_k = code-digit head(s_k)   (the distribution of x_{t+k+1})
// with e the target's own input embedding (frozen, not in the file). x_{t+1}
// is the token the target drew from h_t; x_{t+2}, x_{t+3}, ... are the
// draft's own.
//
// File (safetensors):
//   cell.state.weight [C, H], cell.token.weight [C, H], cell.bias [C],
//   cell.out.weight [H, C], digits.weight [R, H], digits.bias [R]
// and metadata cadenza.kind = "recurrent", cadenza.hidden_size (H),
// cadenza.cell_size (C), cadenza.depth (the steps it was trained to walk),
// and the code grid (cadenza.output = "code_digits", cadenza.code_levels,
// cadenza.code_offset, cadenza.vocab_size: code_digit_head.h).
// cadenza.candidate_scoring = "target_output_table" marks a draft trained
// (`cadenza train recurrent --table-scoring`) so that its states also score
// tokens through the target's own output table, logits = W_lm s_k: the
// head's most likely tokens are candidates, the table scores them
// (draft.recurrent's `candidates`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "code_digit_head.h"
#include "half_panels.h"

namespace cadenza::drafts {

struct RecurrentDraft {
    at::Tensor state_weight;  // [C, H]
    at::Tensor token_weight;  // [C, H]
    at::Tensor bias;          // [C]
    at::Tensor out_weight;    // [H, C]
    at::Tensor digit_weight;  // [R, H]
    at::Tensor digit_bias;    // [R]
    std::shared_ptr<const CodeDigitDistribution> digits;
    int64_t depth = 0;
    bool table_scored = false;  // cadenza.candidate_scoring = "target_output_table"
    // After hold_cell_as_half(): [W_state | W_token] as one [C, 2H] matrix
    // and W_out, as float16 panels, which advance_row then multiplies by.
    std::shared_ptr<const HalfPanels> half_input, half_output;

    // A cell that starts as the identity (W_out = 0: s_k = h_t), its input
    // weights uniform in +-1/sqrt(H) from `seed`, and a digit head that
    // starts as `initial_digit_weight` / `initial_digit_bias` (training's
    // factorized form of the target's output table).
    static RecurrentDraft initial(int64_t hidden_size, int64_t cell_size, int64_t depth, const CodeGrid& grid,
                                  const at::Tensor& initial_digit_weight, const at::Tensor& initial_digit_bias,
                                  uint64_t seed);
    // Reads a file written by save(); throws cadenza::sdk::Error
    // (INVALID_CONFIG) naming the file and what is wrong. `vocab_size` > 0
    // must equal the grid's (the target's vocabulary).
    static RecurrentDraft load(const std::filesystem::path& path, int64_t vocab_size = 0);
    void save(const std::filesystem::path& path,
              const std::vector<std::pair<std::string, std::string>>& metadata = {}) const;

    int64_t hidden_size() const { return state_weight.size(1); }
    int64_t cell_size() const { return state_weight.size(0); }
    // "cell 512 on hidden 256, trained 4 steps deep, code digits 8,8,8,4,4 from token 58"
    std::string description() const;
    // The weights as training updates them, by their file names.
    std::vector<std::pair<std::string, at::Tensor>> named_tensors() const;

    // Holds the cell's three matrices also as float16 panels (half_panels.h)
    // for advance_row: half the bytes, so a proposal's steps after the first
    // read them from L2; each weight rounded to the nearest half.
    void hold_cell_as_half();

    // One step of the cell on states [..., H] and the embeddings [..., H] of the tokens they read.
    at::Tensor advance(const at::Tensor& state, const at::Tensor& token_embedding) const;
    // The same step for one state as kernel calls on raw float32 rows (a
    // drafter's hot path: no LibTorch operator, each a few microseconds of
    // dispatch): `state` [H] is advanced in place, `token_embedding` [H] is
    // the token's row, `scratch` holds row_scratch_size() floats. Weights as
    // load() gives them (float32, contiguous, on the CPU), or their float16
    // panels after hold_cell_as_half().
    void advance_row(float* state, const float* token_embedding, float* scratch) const;
    int64_t row_scratch_size() const { return 2 * cell_size() + 2 * hidden_size(); }
    // digit_logits() of one state into `out` [R], under advance_row's terms.
    void digit_logits_row(const float* state, float* out) const;

    // The code-digit head's logits [..., R] of states [..., H].
    at::Tensor digit_logits(const at::Tensor& state) const {
        return state.dim() == 1 ? at::addmv(digit_bias, digit_weight, state) : at::linear(state, digit_weight, digit_bias);
    }
};

}  // namespace cadenza::drafts
