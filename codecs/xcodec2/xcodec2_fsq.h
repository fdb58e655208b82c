// X-codec2's quantizer: vector_quantize_pytorch's ResidualFSQ (v1.17.8) with
// one quantizer over levels [4, 4, 4, 4, 4, 4, 4, 4] ("4 x 8": 4^8 = 65,536
// implicit codes of 8 values each), with the linear projections around it
// (vq_dim 2048 -> 8 -> 2048). See docs/codecs.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "parameter_source.h"

namespace cadenza::xcodec2 {

// FSQ without projections: a code is one value per level, each of
// (l - l/2) / (l/2) for l in 0..level-1 (level 4: -1, -0.5, 0, 0.5); its
// index is sum_i l_i * basis_i with basis = cumprod([1] + levels[:-1])
// (the first level is the least significant digit).
class FiniteScalarQuantizer {
public:
    explicit FiniteScalarQuantizer(std::vector<int64_t> levels);

    int64_t dim() const { return static_cast<int64_t>(levels_.size()); }
    int64_t codebook_size() const { return codebook_size_; }
    const std::vector<int64_t>& levels() const { return levels_; }

    // int64 [...] in [0, codebook_size) -> float32 [..., dim]
    at::Tensor indices_to_codes(const at::Tensor& indices) const;
    // float32 [..., dim] (codes on the grid) -> int64 [...]
    at::Tensor codes_to_indices(const at::Tensor& codes) const;
    // The reference's FSQ.quantize: bound (tanh, eps 1e-3), round, divide by
    // level // 2. float32 [..., dim] -> codes float32 [..., dim]
    at::Tensor quantize(const at::Tensor& z) const;

private:
    std::vector<int64_t> levels_;
    int64_t codebook_size_ = 1;
    at::Tensor levels_tensor_;  // int64 [dim], CPU
    at::Tensor basis_;          // int64 [dim], CPU
};

// ResidualFSQ(dim = vq_dim, levels, num_quantizers = 1) as X-codec2's
// generator.quantizer: project_in Linear(vq_dim -> dim), project_out
// Linear(dim -> vq_dim) (absent when vq_dim == dim, as in the reference).
class ResidualFsq {
public:
    // Takes `<prefix>project_in.{weight, bias}`, `<prefix>project_out.{weight, bias}`.
    ResidualFsq(std::vector<int64_t> levels, int64_t vq_dim, seanet::ParameterSource& source, const std::string& prefix);

    const FiniteScalarQuantizer& fsq() const { return fsq_; }
    // int64 [batch, frames] -> float32 [batch, frames, vq_dim]
    // (get_output_from_indices: the code, times scale 1, projected out).
    at::Tensor decode(const at::Tensor& indices) const;
    // float32 [batch, frames, vq_dim] -> int64 [batch, frames]: projected
    // in, quantized by the FSQ (see docs/codecs.md about the bound).
    at::Tensor encode(const at::Tensor& x) const;

private:
    FiniteScalarQuantizer fsq_;
    at::Tensor in_weight_, in_bias_, out_weight_, out_bias_;
};

}  // namespace cadenza::xcodec2
