#include "mel_spectrogram.h"

#include <cmath>
#include <vector>

namespace cadenza::mel_fsq {
namespace {

// The Slaney mel scale: linear below 1 kHz, logarithmic above.
constexpr double linear_step = 200.0 / 3.0;
constexpr double break_hz = 1000.0;
constexpr double break_mel = break_hz / linear_step;
const double log_step = std::log(6.4) / 27.0;

double hz_to_mel(double hz) {
    return hz < break_hz ? hz / linear_step : break_mel + std::log(hz / break_hz) / log_step;
}

double mel_to_hz(double mel) {
    return mel < break_mel ? mel * linear_step : break_hz * std::exp(log_step * (mel - break_mel));
}

}  // namespace

at::Tensor slaney_mel_filterbank(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double f_min, double f_max) {
    const int64_t bins = n_fft / 2 + 1;
    std::vector<double> edges(static_cast<size_t>(n_mels + 2));
    const double low = hz_to_mel(f_min), high = hz_to_mel(f_max);
    for (size_t i = 0; i < edges.size(); ++i) edges[i] = mel_to_hz(low + (high - low) * i / (n_mels + 1));
    at::Tensor bank = at::zeros({n_mels, bins}, at::kFloat);
    auto weights = bank.accessor<float, 2>();
    for (int64_t m = 0; m < n_mels; ++m) {
        const double left = edges[m], center = edges[m + 1], right = edges[m + 2];
        const double area_norm = 2.0 / (right - left);
        for (int64_t b = 0; b < bins; ++b) {
            const double hz = static_cast<double>(b) * sample_rate / n_fft;
            const double rising = (hz - left) / (center - left);
            const double falling = (right - hz) / (right - center);
            const double w = std::max(0.0, std::min(rising, falling));
            weights[m][b] = static_cast<float>(w * area_norm);
        }
    }
    return bank;
}

MelSpectrogram::MelSpectrogram(const MelCodecConfig& config) : config_(config) {
    config_.validate();
    window_ = at::hann_window(config_.win_length, /*periodic=*/true, at::TensorOptions().dtype(at::kFloat));
    filterbank_ = slaney_mel_filterbank(config_.sample_rate, config_.n_fft, config_.n_mels, config_.f_min, config_.f_max);
    inverse_filterbank_ = at::linalg_pinv(filterbank_.to(at::kDouble)).to(at::kFloat).contiguous();
}

at::Tensor MelSpectrogram::magnitude(const at::Tensor& audio) const {
    const at::Tensor window = window_.to(audio.device());
    const at::Tensor spectrum = at::stft(audio, config_.n_fft, config_.hop_length, config_.win_length, window,
                                         /*center=*/true, "reflect", /*normalized=*/false, /*onesided=*/true,
                                         /*return_complex=*/true);
    return at::abs(spectrum);
}

at::Tensor MelSpectrogram::log_mel(const at::Tensor& audio) const {
    const at::Tensor mel = at::matmul(filterbank_.to(audio.device()), magnitude(audio));
    return at::log(at::clamp_min(mel, config_.log_floor));
}

at::Tensor MelSpectrogram::magnitude_from_log_mel(const at::Tensor& log_mel) const {
    const at::Tensor mel = at::exp(log_mel);
    return at::clamp_min(at::matmul(inverse_filterbank_.to(log_mel.device()), mel), 0.0);
}

}  // namespace cadenza::mel_fsq
