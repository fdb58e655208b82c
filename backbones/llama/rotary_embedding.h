// Rotary position embedding as Hugging Face's LLaMA applies it: the head's
// two halves rotated together (rotate_half), frequencies theta^(-2i/D),
// optionally rescaled by band as Llama 3.1/3.2 do ("llama3").
#pragma once

#include <utility>

#include <ATen/ATen.h>

#include "llama_config.h"

namespace cadenza::llama {

class RotaryEmbedding {
public:
    RotaryEmbedding(const LlamaConfig& config, int64_t max_positions, const at::Device& device);

    // x: [n, heads, head_dim]; positions: int64 [n]. Returns the rotated x.
    at::Tensor apply(const at::Tensor& x, const at::Tensor& positions) const;
    // The cos and sin rows of `positions` (int64 [n]), each [n, 1, head_dim]:
    // gathered once for every layer of a pass. Throws beyond the table.
    std::pair<at::Tensor, at::Tensor> angles(const at::Tensor& positions) const;
    at::Tensor apply(const at::Tensor& x, const std::pair<at::Tensor, at::Tensor>& angles) const;
    // x: [batch, time, heads, head_dim], positions 0..time-1.
    at::Tensor apply_sequence(const at::Tensor& x) const;

    int64_t max_positions() const { return cos_.size(0); }
    // The tables themselves: row p holds cos (sin) of position p's angles,
    // each half of the head repeated ([max_positions, head_dim], contiguous).
    const at::Tensor& cos_table() const { return cos_; }
    const at::Tensor& sin_table() const { return sin_; }

private:
    at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) const;
    at::Tensor cos_, sin_;  // [max_positions, head_dim]
};

}  // namespace cadenza::llama
