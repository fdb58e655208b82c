// Finite scalar quantization (Mentzer et al. 2023): each latent channel is
// bounded and rounded to one of `levels[i]` values; a code is the mixed-radix
// number of the per-channel digits, channel 0 least significant.
#pragma once

#include <ATen/ATen.h>

#include <vector>

namespace cadenza::mel_fsq {

class FiniteScalarQuantizer {
public:
    explicit FiniteScalarQuantizer(std::vector<int64_t> levels);

    int64_t dims() const { return static_cast<int64_t>(levels_.size()); }
    int64_t codebook_size() const { return codebook_size_; }

    // latent [batch, dims, frames] -> quantized values in [-1, 1], same shape;
    // the rounding passes gradients straight through.
    at::Tensor quantize(const at::Tensor& latent) const;
    // latent [batch, dims, frames] -> codes int64 [batch, frames]
    at::Tensor codes(const at::Tensor& latent) const;
    // codes int64 [batch, frames] -> quantized values [batch, dims, frames];
    // a code outside [0, codebook_size) is an error.
    at::Tensor values(const at::Tensor& codes) const;
    // The bounded latent [batch, dims, frames], whose rounding is the signed
    // digit (differentiable; in digit steps).
    at::Tensor bound(const at::Tensor& latent) const;

private:
    at::Tensor per_channel(const std::vector<double>& values, const at::Tensor& like) const;

    std::vector<int64_t> levels_;
    std::vector<double> half_levels_, offsets_, shifts_, half_widths_;
    std::vector<int64_t> basis_;
    int64_t codebook_size_ = 1;
};

}  // namespace cadenza::mel_fsq
