// The mel-FSQ decoder's convolutions arranged for decoding a few frames at a
// time on the CPU (IncrementalMelDecoder): each weight [out, in, kernel] as
// [out, kernel * in], so that with frames stored time-major the window of
// output frame t is the contiguous input rows t .. t + kernel - 1 (im2col
// without a copy), and, where the AVX-512 kernel runs, as panels in one
// huge-page arena (llama::PanelSet). Through LibTorch's operators a 10-frame
// chunk cost ~2.5 ms, as much as its Griffin-Lim.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "mel_autoencoder.h"
#include "panel_weights.h"

namespace cadenza::mel_fsq {

class MelDecoderConvolutions {
public:
    struct Convolution {
        int64_t in = 0, out = 0, kernel = 0;
        at::Tensor weight;  // [out, kernel * in], float32 on the CPU
        at::Tensor bias;    // [out]
    };

    // The decoder's input convolution, (conv1, conv2) per block, and its
    // output convolution, in that order, from the model's tensors (copied to
    // the CPU as float32: later changes to the model do not reach them).
    explicit MelDecoderConvolutions(const MelAutoencoder& model);

    size_t size() const { return convolutions_.size(); }
    const Convolution& operator[](size_t index) const { return convolutions_[index]; }

    // Output rows y[t * out .. (t + 1) * out) for t < count: the bias plus the
    // convolution of the window of kernel * in floats at x + t * in.
    void apply(size_t index, const float* x, int64_t count, float* y) const;

private:
    std::vector<Convolution> convolutions_;
    llama::PanelSet panels_;  // empty without the AVX-512 kernel
};

}  // namespace cadenza::mel_fsq
