// X-codec2's ISTFTHead (the Vocos head): a linear layer to n_fft + 2
// values per frame, magnitude exp(first half) clipped at 100 and phase the
// second half, the complex spectrum mag * (cos p + i sin p), and the
// reference ISTFT class with "same" padding: irfft of each frame, times the
// window, overlap-added with the hop, cut by (win - hop) / 2 on both sides
// and divided by the overlap-added squared window.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

#include "parameter_source.h"

namespace cadenza::xcodec2 {

// complex [batch, n_fft / 2 + 1, frames] -> float32 [batch, frames * hop].
// The window's length is n_fft (win_length = n_fft, as the head builds it);
// n_fft must be a multiple of hop and n_fft - hop even.
at::Tensor istft_same(const at::Tensor& spectrum, const at::Tensor& window, int64_t hop);

class IstftHead {
public:
    // Takes `<prefix>out.{weight [n_fft + 2, dim], bias}` and `<prefix>istft.window [n_fft]`.
    IstftHead(int64_t dim, int64_t n_fft, int64_t hop, seanet::ParameterSource& source, const std::string& prefix);
    // float32 [batch, frames, dim] -> complex [batch, n_fft / 2 + 1, frames]
    at::Tensor spectrum(const at::Tensor& x) const;
    // float32 [batch, frames, dim] -> float32 [batch, frames * hop]
    at::Tensor forward(const at::Tensor& x) const;
    const at::Tensor& window() const { return window_; }

private:
    int64_t n_fft_, hop_;
    at::Tensor weight_, bias_, window_;
};

}  // namespace cadenza::xcodec2
