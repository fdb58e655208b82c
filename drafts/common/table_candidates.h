// A draft row from a code-digit head's most likely tokens scored by the
// target's own output table (draft.recurrent's `candidates`, for a draft
// trained with `cadenza train recurrent --table-scoring`). The head's
// product distribution can only say digit by digit what the state means;
// the table scores whole tokens, as the target's own head does, but costs
// 8,252 x 256 multiply-adds a row. So the head picks `count` candidates
// (its most likely allowed tokens) and the table scores only those:
//   logit(x) = W_lm[x] . s                        x a candidate
//   q = the pipeline's sampling (temperature, top-k, top-p) over the
//       candidates' logits; every other token gets 0.
// q is the distribution the drafted token is drawn from, so every acceptor
// stays valid on it (acceptor.exact stays exact).
#pragma once

#include <cstdint>
#include <vector>

#include "cadenza/plugin.h"
#include "code_digit_head.h"

namespace cadenza::drafts {

class TableCandidates {
public:
    // `table` [vocab, hidden] float32, row-major, kept by the caller; count >= 1.
    TableCandidates(const float* table, int64_t vocab, int64_t hidden, int64_t count);

    // Writes q into `out` [vocab] from the code-digit head's logits
    // `head_logits` of `digits` and the state `state` [hidden]. Candidates
    // are the head's `count` most likely tokens among those the sampling
    // allows (CodeDigitDistribution::most_likely_tokens). No allocation
    // after the first rows.
    void fill_row(const CodeDigitDistribution& digits, const float* head_logits, const float* state,
                  const cdz_sampling* sampling, float* out);

    // The token fill_row's row gives the most probability (the lowest token
    // on a tie, as a scan of the row finds it) and that probability, without
    // writing the row: `draw = "argmax"`.
    int32_t most_likely(const CodeDigitDistribution& digits, const float* head_logits, const float* state,
                        const cdz_sampling* sampling, float* probability);

private:
    // The candidates (tokens_) and q over them (probabilities_).
    void score(const CodeDigitDistribution& digits, const float* head_logits, const float* state,
               const cdz_sampling* sampling);

    const float* table_;
    int64_t vocab_, hidden_, count_;
    TokenBeam beam_;
    std::vector<int32_t> tokens_;
    std::vector<float> logits_, probabilities_;
};

}  // namespace cadenza::drafts
