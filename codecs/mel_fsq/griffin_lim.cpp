#include "griffin_lim.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

namespace cadenza::mel_fsq {
namespace {

at::Tensor random_phase(int64_t bins, int64_t frames, uint64_t seed, const at::Device& device) {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    return (at::rand({bins, frames}, generator, at::kFloat) * (2.0 * M_PI)).to(device);
}

at::Tensor run(const at::Tensor& magnitude, at::Tensor phase, const at::Tensor& window_in, const StftShape& stft,
               const GriffinLimOptions& options) {
    const int64_t frames = magnitude.size(1);
    const int64_t length = (frames - 1) * stft.hop_length;
    const at::Tensor window = window_in.to(magnitude.device());
    const at::Tensor target = options.power == 1.0 ? magnitude : at::pow(magnitude, options.power);
    at::Tensor angles = at::polar(at::ones_like(target), phase);
    at::Tensor previous = at::zeros_like(angles);
    const double carry = options.momentum / (1.0 + options.momentum);
    auto synthesize = [&](const at::Tensor& unit_angles) {
        return at::istft(target * unit_angles, stft.n_fft, stft.hop_length, stft.win_length, window,
                         /*center=*/true, /*normalized=*/false, /*onesided=*/true, length);
    };
    for (int64_t i = 0; i < options.iterations; ++i) {
        const at::Tensor audio = synthesize(angles);
        const at::Tensor rebuilt = at::stft(audio, stft.n_fft, stft.hop_length, stft.win_length, window,
                                            /*center=*/true, "reflect", false, true, true);
        angles = rebuilt - previous * carry;
        angles = angles / (at::abs(angles) + 1e-16);
        previous = rebuilt;
    }
    return synthesize(angles).contiguous();
}

}  // namespace

at::Tensor griffin_lim(const at::Tensor& magnitude, const at::Tensor& window, const StftShape& stft,
                       const GriffinLimOptions& options) {
    if (magnitude.size(1) < 2) return at::zeros({0}, magnitude.options());
    const at::Tensor phase = random_phase(magnitude.size(0), magnitude.size(1), options.seed, magnitude.device());
    return run(magnitude, phase, window, stft, options);
}

at::Tensor griffin_lim_from(const at::Tensor& magnitude, const at::Tensor& initial_phase, const at::Tensor& window,
                            const StftShape& stft, const GriffinLimOptions& options) {
    if (magnitude.size(1) < 2) return at::zeros({0}, magnitude.options());
    at::Tensor phase = random_phase(magnitude.size(0), magnitude.size(1), options.seed, magnitude.device());
    const int64_t known = std::min(initial_phase.size(1), magnitude.size(1));
    if (known > 0) phase.narrow(1, 0, known).copy_(initial_phase.narrow(1, 0, known));
    return run(magnitude, phase, window, stft, options);
}

}  // namespace cadenza::mel_fsq
