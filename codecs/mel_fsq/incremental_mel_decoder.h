// The mel-FSQ decoder run as codes arrive. Every convolution keeps its input
// frames, time-major, between the "same" zero padding of the sequence's two
// ends, and computes each output frame once: when the input frames its
// kernel reaches exist, or the sequence has ended. Decoding each streamed
// window whole recomputed the decoder's context (28 frames on each side) at
// every chunk: ~7x the work per frame, and 10 of the last window's 24 ms.
// The frames equal whole decoding's up to rounding (another summation order).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace cadenza::mel_fsq {

class MelFsqCodec;

class IncrementalMelDecoder {
public:
    explicit IncrementalMelDecoder(const MelFsqCodec& codec);

    // Appends codes int64 [frames]; after `is_last` the sequence has ended.
    void push(const at::Tensor& codes, bool is_last);
    // Frames of log-mel computed so far: each is final.
    int64_t final_frames() const { return mel_.count; }
    // Denormalized log-mel [n_mels, end - begin] of final frames.
    at::Tensor log_mel(int64_t begin, int64_t end) const;

private:
    // Frames appended to a [channels, capacity] tensor whose capacity doubles.
    struct GrowingFrames {
        at::Tensor frames;
        int64_t count = 0;
        void append(const at::Tensor& more);  // [channels, n]
        at::Tensor view(int64_t begin, int64_t end) const { return frames.narrow(1, begin, end - begin); }
    };
    struct Convolution {
        at::Tensor weight;  // [out, in * kernel]
        at::Tensor bias;    // [out]
        int64_t kernel = 0;
        GrowingFrames input;  // padding frames, then the input frames
        int64_t computed = 0;
        bool input_ended = false;
    };

    at::Tensor advance(Convolution& conv) const;
    void end_input(Convolution& conv) const;
    void take_output(size_t index, const at::Tensor& out);

    int64_t pad_ = 0;
    std::vector<Convolution> convs_;       // input, (conv1, conv2) per block, output
    std::vector<GrowingFrames> residuals_;  // the stream each block adds to: one per block boundary
    GrowingFrames mel_;                     // denormalized log-mel
    at::Tensor mel_mean_, mel_std_;
    const MelFsqCodec& codec_;
};

}  // namespace cadenza::mel_fsq
