#include "griffin_lim.h"

#include "lane_real_fft.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cadenza::mel_fsq {
namespace {

at::Tensor random_phase(int64_t bins, int64_t frames, uint64_t seed, const at::Device& device) {
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    return (at::rand({bins, frames}, generator, at::kFloat) * (2.0 * M_PI)).to(device);
}

// The STFT and ISTFT of torch.stft / torch.istft (center, reflect padding,
// window zero-padded to n_fft, the ISTFT divided by the summed squared
// window), written as out= operations on buffers allocated once (devices
// other than the CPU; GriffinLimLanes below on the CPU). Through
// at::stft/at::istft every iteration allocated a dozen spectrogram-sized
// tensors and rebuilt the window envelope: 1.6x this version's time for a
// 4 s utterance, 3.3x for a 20 s one (whose tensors leave the cache).
class GriffinLimBuffers {
public:
    GriffinLimBuffers(const at::Tensor& target, const at::Tensor& window_in, const StftShape& stft)
        : target_(target), n_fft_(stft.n_fft), hop_(stft.hop_length), pad_(stft.n_fft / 2) {
        const int64_t frames = target.size(0);
        length_ = (frames - 1) * hop_;
        const at::TensorOptions real = target.options();
        window_ = at::zeros({n_fft_}, real);
        window_.narrow(0, (n_fft_ - stft.win_length) / 2, stft.win_length).copy_(window_in.to(real));
        positions_ = ((at::arange(frames, real.dtype(at::kLong)) * hop_).unsqueeze(1) +
                      at::arange(n_fft_, real.dtype(at::kLong)).unsqueeze(0))
                         .reshape({-1});
        summed_ = at::zeros({n_fft_ + hop_ * (frames - 1)}, real);
        summed_.index_add_(0, positions_, window_.square().repeat({frames}));
        const at::Tensor envelope = summed_.narrow(0, pad_, length_);
        if (length_ > 0 && !(envelope.min().item<double>() > 1e-11))
            throw std::invalid_argument("griffin-lim: the window does not overlap-add to a nonzero envelope");
        inverse_envelope_ = envelope.reciprocal();
        spectrum_ = at::empty({frames, target.size(1)}, real.dtype(at::kComplexFloat));
        frame_samples_ = at::empty({frames, n_fft_}, real);
        audio_ = at::empty({length_}, real);
        padded_ = at::empty({1, length_ + 2 * pad_}, real);
        magnitude_ = at::empty_like(target);
    }

    // audio [(frames - 1) * hop] from unit phasors [frames, bins] and the target magnitude.
    const at::Tensor& synthesize(const at::Tensor& unit_angles) {
        at::mul_out(spectrum_, unit_angles, target_);
        at::fft_irfft_out(frame_samples_, spectrum_, n_fft_, 1);
        frame_samples_.mul_(window_);
        summed_.zero_();
        summed_.index_add_(0, positions_, frame_samples_.view({-1}));
        at::mul_out(audio_, summed_.narrow(0, pad_, length_), inverse_envelope_);
        return audio_;
    }

    // The STFT [frames, bins] of audio_ into `out`.
    void analyze(at::Tensor& out) {
        at::reflection_pad1d_out(padded_, audio_.view({1, length_}), {pad_, pad_});
        const int64_t frames = out.size(0);
        at::mul_out(frame_samples_, padded_.as_strided({frames, n_fft_}, {hop_, 1}), window_);
        at::fft_rfft_out(out, frame_samples_, n_fft_, 1);
    }

    // angles = (rebuilt - carry * previous) / |...|
    void accelerate(const at::Tensor& rebuilt, const at::Tensor& previous, double carry, at::Tensor& angles) {
        at::sub_out(angles, rebuilt, previous, carry);
        at::abs_out(magnitude_, angles);
        magnitude_.add_(1e-16);
        angles.div_(magnitude_);
    }

private:
    at::Tensor target_;  // [frames, bins]
    int64_t n_fft_, hop_, pad_, length_ = 0;
    at::Tensor window_, positions_, summed_, inverse_envelope_;
    at::Tensor spectrum_, frame_samples_, audio_, padded_, magnitude_;
};

// spectrum = magnitude * u / |u|, u = rebuilt - carry * previous: the
// momentum step and the next synthesis' spectrum in one pass. One clone per
// instruction set (its square roots and divisions are most of a pass).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void accelerate_spectrum(const float* __restrict magnitude, const float* __restrict rebuilt_real,
                         const float* __restrict rebuilt_imag, const float* __restrict previous_real,
                         const float* __restrict previous_imag, float carry, int64_t count,
                         float* __restrict spectrum_real, float* __restrict spectrum_imag) {
    for (int64_t i = 0; i < count; ++i) {
        const float re = rebuilt_real[i] - carry * previous_real[i];
        const float im = rebuilt_imag[i] - carry * previous_imag[i];
        const float scale = magnitude[i] / (std::sqrt(re * re + im * im) + 1e-16f);
        spectrum_real[i] = re * scale;
        spectrum_imag[i] = im * scale;
    }
}

// Frames [first, first + count) (count <= kLanes) of torch.stft's
// center = true, "reflect" analysis of audio [length]: frame f windows
// audio[f * hop - n_fft / 2 ...], reflected at the ends. Frames within the
// audio are read in place; the few that reach past an end are reflected
// into `edges` ([kLanes][n_fft]) first. The spectrum goes to real and imag
// [bins][kLanes].
void stft_block(LaneRealFft& fft, const float* audio, int64_t length, int64_t hop, const float* window,
                int64_t first, int64_t count, float* edges, float* real, float* imag) {
    const int64_t n_fft = fft.size(), pad = n_fft / 2, period = 2 * (length - 1);
    auto reflected = [&](int64_t j) {
        if (j >= 0 && j < length) return j;
        if (j < 0 && -j < length) return -j;
        if (j >= length && j < period) return period - j;
        j = period > 0 ? std::abs(j) % period : 0;  // more than once around (audio shorter than pad)
        return j >= length ? period - j : j;
    };
    const float* from[LaneRealFft::kLanes];
    for (int64_t l = 0; l < count; ++l) {
        const int64_t start = (first + l) * hop - pad;  // audio index of the frame's first sample
        if (start >= 0 && start + n_fft <= length) {
            from[l] = audio + start;
            continue;
        }
        float* edge = edges + l * n_fft;
        for (int64_t n = 0; n < n_fft; ++n) edge[n] = audio[reflected(start + n)];
        from[l] = edge;
    }
    fft.load(from, count, window);
    fft.forward(real, imag);
}

// The window zero-padded to n_fft on both sides, as torch.stft pads it.
std::vector<float> padded_window(const at::Tensor& window, int64_t n_fft) {
    std::vector<float> padded(static_cast<size_t>(n_fft), 0.0f);
    const at::Tensor w = window.to(at::kCPU, at::kFloat).contiguous();
    std::copy_n(w.data_ptr<float>(), w.numel(), padded.begin() + (n_fft - w.numel()) / 2);
    return padded;
}

// The same on the CPU in plain loops around LaneRealFft: the spectra in
// its lane layout ([block][bin][lane], frame = block * kLanes + lane; lanes
// past the last frame stay zero), the audio and each frame's samples in
// time order. The momentum step writes the next synthesis' spectrum
// directly (target magnitude times unit phasor). 32 iterations on a
// 44-frame window (a stream's last) took 4.7 ms with LibTorch's FFTs
// between the same loops, 2.4 ms here; on a 20-frame window 2.3 -> 1.3 ms.
class GriffinLimLanes {
public:
    static constexpr int64_t kLanes = LaneRealFft::kLanes;

    GriffinLimLanes(const at::Tensor& target, const at::Tensor& unit_angles, const at::Tensor& window_in,
                    const StftShape& stft)
        : fft_(stft.n_fft), frames_(target.size(0)), bins_(target.size(1)), blocks_((frames_ + kLanes - 1) / kLanes),
          n_fft_(stft.n_fft), hop_(stft.hop_length), pad_(stft.n_fft / 2), length_((frames_ - 1) * stft.hop_length) {
        window_ = padded_window(window_in.narrow(0, 0, stft.win_length), n_fft_);
        summed_.assign(static_cast<size_t>(n_fft_ + hop_ * (frames_ - 1)), 0.0f);
        for (int64_t f = 0; f < frames_; ++f)
            for (int64_t n = 0; n < n_fft_; ++n) summed_[f * hop_ + n] += window_[n] * window_[n];
        inverse_envelope_.resize(static_cast<size_t>(length_));
        for (int64_t i = 0; i < length_; ++i) {
            if (!(summed_[pad_ + i] > 1e-11f))
                throw std::invalid_argument("griffin-lim: the window does not overlap-add to a nonzero envelope");
            inverse_envelope_[i] = 1.0f / summed_[pad_ + i];
        }
        const size_t lane_values = static_cast<size_t>(blocks_ * bins_ * kLanes);
        for (std::vector<float>* v : {&magnitude_, &spectrum_real_, &spectrum_imag_, &rebuilt_real_, &rebuilt_imag_,
                                      &previous_real_, &previous_imag_})
            v->assign(lane_values, 0.0f);
        const float* m = target.data_ptr<float>();
        const auto* a = reinterpret_cast<const float*>(unit_angles.data_ptr<c10::complex<float>>());
        for (int64_t f = 0; f < frames_; ++f)
            for (int64_t k = 0; k < bins_; ++k) {
                const size_t at = lane_index(f, k);
                const int64_t i = f * bins_ + k;
                magnitude_[at] = m[i];
                spectrum_real_[at] = m[i] * a[2 * i];
                spectrum_imag_[at] = m[i] * a[2 * i + 1];
            }
        edges_.resize(static_cast<size_t>(kLanes * n_fft_));
        audio_ = at::empty({length_}, at::kFloat);
    }

    at::Tensor run(int64_t iterations, double momentum) {
        const auto carry = static_cast<float>(momentum / (1.0 + momentum));
        for (int64_t i = 0; i < iterations; ++i) {
            synthesize();
            analyze();
            accelerate(carry);
            std::swap(previous_real_, rebuilt_real_);
            std::swap(previous_imag_, rebuilt_imag_);
        }
        synthesize();
        return audio_;
    }

private:
    size_t lane_index(int64_t frame, int64_t bin) const {
        return static_cast<size_t>(((frame / kLanes) * bins_ + bin) * kLanes + frame % kLanes);
    }

    // audio_ from spectrum_: each frame's inverse FFT, windowed, overlap-added
    // and divided by the summed squared window.
    void synthesize() {
        std::fill(summed_.begin(), summed_.end(), 0.0f);
        float* to[kLanes];
        for (int64_t b = 0; b < blocks_; ++b) {
            const size_t block = static_cast<size_t>(b * bins_ * kLanes);
            fft_.inverse(spectrum_real_.data() + block, spectrum_imag_.data() + block);
            const int64_t count = std::min(kLanes, frames_ - b * kLanes);
            for (int64_t l = 0; l < count; ++l) to[l] = summed_.data() + (b * kLanes + l) * hop_;
            fft_.accumulate(to, count, window_.data());
        }
        float* audio = audio_.data_ptr<float>();
        for (int64_t i = 0; i < length_; ++i) audio[i] = summed_[pad_ + i] * inverse_envelope_[i];
    }

    // rebuilt_ = the STFT of audio_.
    void analyze() {
        for (int64_t b = 0; b < blocks_; ++b) {
            const size_t block = static_cast<size_t>(b * bins_ * kLanes);
            stft_block(fft_, audio_.data_ptr<float>(), length_, hop_, window_.data(), b * kLanes,
                       std::min(kLanes, frames_ - b * kLanes), edges_.data(), rebuilt_real_.data() + block,
                       rebuilt_imag_.data() + block);
        }
    }

    void accelerate(float carry) {
        accelerate_spectrum(magnitude_.data(), rebuilt_real_.data(), rebuilt_imag_.data(), previous_real_.data(),
                            previous_imag_.data(), carry, static_cast<int64_t>(magnitude_.size()),
                            spectrum_real_.data(), spectrum_imag_.data());
    }

    LaneRealFft fft_;
    int64_t frames_, bins_, blocks_, n_fft_, hop_, pad_, length_;
    std::vector<float> window_, summed_, inverse_envelope_, edges_;
    std::vector<float> magnitude_, spectrum_real_, spectrum_imag_, rebuilt_real_, rebuilt_imag_, previous_real_,
        previous_imag_;
    at::Tensor audio_;
};

template <class Buffers>
at::Tensor iterate(Buffers& buffers, at::Tensor angles, const GriffinLimOptions& options) {
    at::Tensor rebuilt = at::empty_like(angles);
    at::Tensor previous = at::zeros_like(angles);
    const double carry = options.momentum / (1.0 + options.momentum);
    for (int64_t i = 0; i < options.iterations; ++i) {
        buffers.synthesize(angles);
        buffers.analyze(rebuilt);
        buffers.accelerate(rebuilt, previous, carry, angles);
        std::swap(previous, rebuilt);
    }
    return buffers.synthesize(angles);
}

at::Tensor run(const at::Tensor& magnitude, const at::Tensor& phase, const at::Tensor& window,
               const StftShape& stft, const GriffinLimOptions& options) {
    const at::Tensor scaled = options.power == 1.0 ? magnitude : at::pow(magnitude, options.power);
    const at::Tensor target = scaled.to(at::kFloat).t().contiguous();  // [frames, bins]
    at::Tensor angles = at::polar(at::ones_like(target), phase.to(at::kFloat).t().contiguous());
    if (target.device().is_cpu() && !options.operators_on_cpu && LaneRealFft::supports(stft.n_fft))
        return GriffinLimLanes(target, angles, window, stft).run(options.iterations, options.momentum);
    GriffinLimBuffers buffers(target, window, stft);
    return iterate(buffers, angles, options);
}

}  // namespace

at::Tensor stft_phases(const at::Tensor& audio, const at::Tensor& window, const StftShape& stft, int64_t frames) {
    const int64_t length = audio.numel();
    if (audio.dim() != 1 || length <= stft.n_fft / 2 || frames < 0 || frames > 1 + length / stft.hop_length)
        throw std::invalid_argument("stft_phases: " + std::to_string(frames) + " frames of " + std::to_string(length) +
                                    " samples (one-dimensional, more than n_fft / 2, at most 1 + samples / hop)");
    if (!audio.device().is_cpu() || !LaneRealFft::supports(stft.n_fft)) {
        const at::Tensor spectrum = at::stft(audio, stft.n_fft, stft.hop_length, stft.win_length, window, true,
                                             "reflect", false, true, true);
        return at::angle(spectrum).narrow(1, 0, frames).contiguous();
    }
    const at::Tensor samples = audio.to(at::kFloat).contiguous();
    constexpr int64_t lanes = LaneRealFft::kLanes;
    LaneRealFft fft(stft.n_fft);
    const std::vector<float> padded = padded_window(window.narrow(0, 0, stft.win_length), stft.n_fft);
    std::vector<float> edges(static_cast<size_t>(lanes * stft.n_fft)), real(static_cast<size_t>(fft.bins() * lanes)),
        imag(real.size());
    at::Tensor phases = at::empty({fft.bins(), frames}, at::kFloat);
    float* out = phases.data_ptr<float>();
    for (int64_t first = 0; first < frames; first += lanes) {
        const int64_t count = std::min(lanes, frames - first);
        stft_block(fft, samples.data_ptr<float>(), length, stft.hop_length, padded.data(), first, count, edges.data(),
                   real.data(), imag.data());
        for (int64_t k = 0; k < fft.bins(); ++k)
            for (int64_t l = 0; l < count; ++l)
                out[k * frames + first + l] = std::atan2(imag[static_cast<size_t>(k * lanes + l)],
                                                         real[static_cast<size_t>(k * lanes + l)]);
    }
    return phases;
}

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
