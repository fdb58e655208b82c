// Griffin-Lim phase reconstruction with momentum ("fast Griffin-Lim",
// Perraudin et al. 2013): the STFT and ISTFT of torch.stft / torch.istft on
// buffers allocated once per call; on the CPU, where n_fft is a power of
// two, plain loops around LaneRealFft (lane_real_fft.h).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace cadenza::mel_fsq {

struct GriffinLimOptions {
    int64_t iterations = 32;
    double momentum = 0.99;
    // Magnitudes are raised to this power first (> 1 sharpens harmonics).
    double power = 1.0;
    uint64_t seed = 0;  // initial phases: a fixed pseudo-random draw, so runs repeat bit for bit
    // On the CPU, LibTorch's operators (the path of other devices) instead of
    // the plain loops around the lane FFT: for the tests that hold one to the other.
    bool operators_on_cpu = false;
};

struct StftShape {
    int64_t n_fft, hop_length, win_length;
};

// magnitude [n_fft / 2 + 1, frames] -> float32 audio [(frames - 1) * hop_length].
at::Tensor griffin_lim(const at::Tensor& magnitude, const at::Tensor& window, const StftShape& stft,
                       const GriffinLimOptions& options);

// The phases [n_fft / 2 + 1, frames] (radians) of the first `frames` frames
// of torch.stft(audio, center = true, pad_mode = "reflect"), frames <= 1 +
// samples / hop_length. The lane FFT on the CPU where n_fft is a power of
// two, LibTorch's operators elsewhere.
at::Tensor stft_phases(const at::Tensor& audio, const at::Tensor& window, const StftShape& stft, int64_t frames);

// As above, but the first `known_frames` frames start from the phases of
// `initial_phase` ([bins, known_frames], radians) instead of random ones:
// used to continue a stream from audio already emitted.
at::Tensor griffin_lim_from(const at::Tensor& magnitude, const at::Tensor& initial_phase, const at::Tensor& window,
                            const StftShape& stft, const GriffinLimOptions& options);

}  // namespace cadenza::mel_fsq
