// Code embeddings with the codec's structure. Each code of an FSQ codec is a
// point of a grid (levels [8,8,8,4,4]: 8,192 codes), and codes one digit
// apart decode to nearby frames. Here a code's row of the tied embedding and
// output table is its own free row plus one learned vector per digit value,
// so codes that share digits share those vectors: a rare code learns from its
// neighbours' occurrences, and as an output head the digit vectors score
// each digit on its own. Training only: the saved model holds the summed
// table, a plain LLaMA that the engine runs unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace cadenza::training {

class CodeDigitEmbedding {
public:
    CodeDigitEmbedding() = default;
    // `levels` least significant digit first (the FSQ quantizer's order:
    // code = sum digit_d * prod_{e<d} levels[e]); their product must be
    // `code_count`. The digit vectors start at zero, so the table starts
    // equal to the base it is added to. Throws cadenza::Error otherwise.
    CodeDigitEmbedding(std::vector<int64_t> levels, int64_t code_offset, int64_t code_count, int64_t hidden,
                       const at::TensorOptions& options);

    bool enabled() const { return !levels_.empty(); }
    const std::vector<int64_t>& levels() const { return levels_; }
    // One [levels[d], hidden] leaf tensor per digit, to train.
    const std::vector<at::Tensor>& digit_vectors() const { return digit_vectors_; }
    // `base` [vocab, hidden] with each code's digit vectors added to its row.
    at::Tensor table(const at::Tensor& base) const;
    // "8,8,8,4,4 from token 58": what a resumed run must share.
    std::string describe() const;

private:
    std::vector<int64_t> levels_;
    int64_t code_offset_ = 0;
    at::Tensor code_digits_;  // [codes, digits] long
    std::vector<at::Tensor> digit_vectors_;
};

}  // namespace cadenza::training
