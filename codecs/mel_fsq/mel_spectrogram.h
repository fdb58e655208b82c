// Log-mel analysis (magnitude STFT, Slaney mel filterbank as librosa's
// default, natural log above a floor) and its approximate inverse to a linear
// magnitude spectrogram for a vocoder.
#pragma once

#include <ATen/ATen.h>

#include "mel_codec_config.h"

namespace cadenza::mel_fsq {

class MelSpectrogram {
public:
    explicit MelSpectrogram(const MelCodecConfig& config);

    // float32 audio [samples] or [batch, samples] -> log-mel [(batch,) n_mels, frames],
    // frames = samples / hop_length + 1 (centered frames, reflect padding).
    at::Tensor log_mel(const at::Tensor& audio) const;
    // Magnitude STFT [(batch,) n_fft / 2 + 1, frames] of the same analysis.
    at::Tensor magnitude(const at::Tensor& audio) const;
    // log-mel [n_mels, frames] -> non-negative linear magnitude [n_fft / 2 + 1, frames]
    // (least squares through the pseudo-inverse of the filterbank, clamped at 0).
    at::Tensor magnitude_from_log_mel(const at::Tensor& log_mel) const;

    const at::Tensor& window() const { return window_; }
    const at::Tensor& filterbank() const { return filterbank_; }  // [n_mels, bins]
    const MelCodecConfig& config() const { return config_; }

private:
    MelCodecConfig config_;
    at::Tensor window_;
    at::Tensor filterbank_;
    at::Tensor inverse_filterbank_;  // [bins, n_mels]
};

// The Slaney-normalized triangular mel filterbank [n_mels, n_fft / 2 + 1].
at::Tensor slaney_mel_filterbank(int64_t sample_rate, int64_t n_fft, int64_t n_mels, double f_min, double f_max);

}  // namespace cadenza::mel_fsq
