#include "xcodec2_istft.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/complex.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/fft_irfft.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/zeros.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::xcodec2 {

namespace {

// frames [..., frames, n_fft] -> overlap-added [..., (frames - 1) * hop + n_fft]
at::Tensor overlap_add(const at::Tensor& frames, int64_t hop) {
    const int64_t count = frames.size(-2);
    const int64_t n_fft = frames.size(-1);
    const int64_t parts = n_fft / hop;
    std::vector<int64_t> split(frames.sizes().begin(), frames.sizes().end() - 1);
    split.push_back(parts);
    split.push_back(hop);
    const at::Tensor pieces = frames.reshape(split);  // [..., frames, parts, hop]
    std::vector<int64_t> shape(frames.sizes().begin(), frames.sizes().end() - 2);
    shape.push_back(count + parts - 1);
    shape.push_back(hop);
    at::Tensor out = at::zeros(shape, frames.options());
    const int64_t time_dim = static_cast<int64_t>(shape.size()) - 2;
    for (int64_t part = 0; part < parts; ++part) out.narrow(time_dim, part, count).add_(pieces.select(-2, part));
    std::vector<int64_t> flat(shape.begin(), shape.end() - 2);
    flat.push_back(-1);
    return out.reshape(flat);
}

}  // namespace

at::Tensor istft_same(const at::Tensor& spectrum, const at::Tensor& window, int64_t hop) {
    const int64_t n_fft = window.size(0);
    if (hop <= 0 || n_fft % hop != 0 || (n_fft - hop) % 2 != 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "ISTFT: n_fft " + std::to_string(n_fft) +
                                                   " must be a multiple of the hop " + std::to_string(hop) +
                                                   " with n_fft - hop even");
    if (spectrum.dim() != 3 || spectrum.size(1) != n_fft / 2 + 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "ISTFT: expected a spectrum [batch, n_fft / 2 + 1, frames]");
    const int64_t frames = spectrum.size(2);
    const int64_t pad = (n_fft - hop) / 2;
    // irfft along the bins (norm "backward": 1 / n_fft), each frame windowed.
    const at::Tensor time = at::fft_irfft(spectrum, n_fft, 1, "backward");  // [batch, n_fft, frames]
    const at::Tensor windowed = (time * window.view({1, n_fft, 1})).transpose(1, 2);
    const at::Tensor y = overlap_add(windowed, hop);
    const at::Tensor envelope = overlap_add((window * window).unsqueeze(0).expand({frames, n_fft}), hop);
    const int64_t length = y.size(1) - 2 * pad;
    const at::Tensor cut = envelope.narrow(0, pad, length);
    if (!cut.gt(1e-11).all().item<bool>())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "ISTFT: the window's overlap-added square has zeros (not NOLA)");
    return y.narrow(1, pad, length) / cut;
}

IstftHead::IstftHead(int64_t dim, int64_t n_fft, int64_t hop, seanet::ParameterSource& source,
                     const std::string& prefix)
    : n_fft_(n_fft), hop_(hop) {
    using seanet::ParameterRole;
    weight_ = source.take(prefix + "out.weight", {n_fft + 2, dim}, ParameterRole::linear_weight);
    bias_ = source.take(prefix + "out.bias", {n_fft + 2}, ParameterRole::bias);
    window_ = source.take(prefix + "istft.window", {n_fft}, ParameterRole::unused_buffer);
}

at::Tensor IstftHead::spectrum(const at::Tensor& x) const {
    const at::Tensor prediction = at::linear(x, weight_, bias_).transpose(1, 2);  // [batch, n_fft + 2, frames]
    const int64_t bins = n_fft_ / 2 + 1;
    const at::Tensor magnitude = at::clamp_max(at::exp(prediction.narrow(1, 0, bins)), 100.0);
    const at::Tensor phase = prediction.narrow(1, bins, bins);
    return at::complex(magnitude * at::cos(phase), magnitude * at::sin(phase));
}

at::Tensor IstftHead::forward(const at::Tensor& x) const { return istft_same(spectrum(x), window_, hop_); }

}  // namespace cadenza::xcodec2
