// One side of the mel-FSQ autoencoder (mel_autoencoder.h) arranged for raw
// time-major rows on the CPU: each weight [out, in, kernel] as
// [out, kernel * in], so that the window of output frame t is the contiguous
// input rows t .. t + kernel - 1 (im2col without a copy), and, where the
// vectorized kernel runs (AVX-512F, or AVX2), as panels in one huge-page
// arena (llama::PanelSet).
// The streamed decoder (IncrementalMelDecoder) applies the decoder's
// convolutions one by one as frames arrive; encoding and whole decoding run
// a side at once (run). Through LibTorch's operators a streamed 10-frame
// chunk cost ~2.5 ms, as much as its Griffin-Lim, and encoding a 3 s voice
// prompt ~7 ms.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mel_autoencoder.h"
#include "panel_weights.h"

namespace cadenza::mel_fsq {

class MelConvolutionStack {
public:
    struct Convolution {
        int64_t in = 0, out = 0, kernel = 0;
        at::Tensor weight;  // [out, kernel * in], float32 on the CPU
        at::Tensor bias;    // [out]
    };

    // `side` "encoder" or "decoder": its input convolution, (conv1, conv2)
    // per block, and its output convolution, in that order, from the model's
    // tensors (copied to the CPU as float32: later changes to the model do
    // not reach them). `precision` is the panels' (float32; float16: each
    // weight rounded to the nearest half, converted as the kernel loads it;
    // int8: each output's weights in 127 steps of its largest magnitude and
    // each window of input rounded the same way, int8_panels.h, which needs
    // AVX-512 VNNI or AVX2 and throws std::invalid_argument without them);
    // without a vectorized kernel there are no panels and the weights stay float32
    // (precision() says which).
    MelConvolutionStack(const MelAutoencoder& model, const std::string& side,
                        llama::PanelPrecision precision = llama::PanelPrecision::float32);

    // How the convolutions' weights are stored (float32 without panels).
    llama::PanelPrecision precision() const;

    size_t size() const { return convolutions_.size(); }
    const Convolution& operator[](size_t index) const { return convolutions_[index]; }

    // Output rows y[t * out .. (t + 1) * out) for t < count: the bias plus the
    // convolution of the window of kernel * in floats at x + t * in.
    void apply(size_t index, const float* x, int64_t count, float* y) const;

    // The whole side on [channels, frames] (any device; the result on the
    // CPU): conv(input), then x + conv2(gelu(conv1(gelu(x)))) per block,
    // then conv(gelu(x), output), "same" zero padding, as MelAutoencoder's.
    // With `threads` > 1, the panels and at least 16 frames per thread, each
    // of that many threads (the caller's and new ones) convolves its share
    // of the frames; the result is the same to the bit.
    at::Tensor run(const at::Tensor& input, int threads = 1) const;

private:
    std::vector<Convolution> convolutions_;
    llama::PanelSet panels_;  // empty without a vectorized kernel
};

// at::gelu's default, x * (1 + erf(x / sqrt 2)) / 2, with erf as Abramowitz
// and Stegun's 7.1.26 (absolute error below 1.5e-7) over the vectorized exp:
// loops the compiler vectorizes, where std::erf per value took a third of
// the streamed decoder's time. `scratch` holds `count` floats.
void gelu_rows(const float* x, int64_t count, float* out, float* scratch);

}  // namespace cadenza::mel_fsq
