// Real FFTs of one power-of-two size on a block of kLanes frames at once,
// frame l in SIMD lane l: element i of the block is kLanes consecutive
// floats, one per frame ([i][lane]). Every butterfly is then one vector
// operation across the frames, with no shuffles, and plain loops vectorize
// for whatever the CPU has. Griffin-Lim transforms tens of frames per
// window 64 times over, which LibTorch's FFT did one frame at a time
// (1.1 us for a 1024-point frame).
//
// The size-N real transform is a size-N/2 complex one on z[m] = x[2m] +
// i x[2m+1] (radix-2, decimation in time), split into the real signal's
// spectrum afterwards; the inverse runs the same forward transform on the
// swapped real and imaginary parts.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace cadenza::mel_fsq {

class LaneRealFft {
public:
    static constexpr int64_t kLanes = 16;

    // size: a power of two, at least 4; throws std::invalid_argument otherwise.
    explicit LaneRealFft(int64_t size);

    static bool supports(int64_t size);
    int64_t size() const { return size_; }
    int64_t bins() const { return size_ / 2 + 1; }

    // Forward: `load` takes frame l from frames[l] (size samples, times
    // window[n] where a window is given) for l < count, zeros in the other
    // lanes; `forward` then writes the spectrum, real and imaginary parts
    // [bins][kLanes], as torch.fft.rfft: unnormalized.
    void load(const float* const* frames, int64_t count, const float* window);
    void forward(float* real, float* imag);

    // Inverse: `inverse` reads a spectrum [bins][kLanes] (the imaginary parts
    // of the first and last bins are ignored, as torch.fft.irfft does);
    // `accumulate` then adds lane l's samples, scaled by 1 / size and times
    // window[n] where a window is given, to to[l][n] for l < count.
    void inverse(const float* real, const float* imag);
    void accumulate(float* const* to, int64_t count, const float* window) const;

private:
    // The bit reversal and twiddles of one size, computed once per process
    // and shared: a stream window builds two transforms, and the ~1,300
    // sines and cosines took 30 us each time.
    struct Tables;
    static std::shared_ptr<const Tables> tables_of(int64_t size);

    int64_t size_, half_;
    std::shared_ptr<const Tables> tables_;
    std::vector<float> real_, imag_;  // the complex transform's slots [half_][kLanes]
};

}  // namespace cadenza::mel_fsq
