// The mel-FSQ decoder run as codes arrive. Every convolution keeps its input
// frames, time-major, between the "same" zero padding of the sequence's two
// ends, and computes each output frame once: when the input frames its
// kernel reaches exist, or the sequence has ended. Decoding each streamed
// window whole recomputed the decoder's context (28 frames on each side) at
// every chunk: ~7x the work per frame, and 10 of the last window's 24 ms.
// The convolutions are the codec's decoder_stack(), on raw rows: the
// frames equal whole decoding's up to rounding (another summation order).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace cadenza::mel_fsq {

class MelFsqCodec;
class MelConvolutionStack;

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
    // Rows of `width` floats, appended at the end.
    struct Frames {
        int64_t width = 0;
        int64_t count = 0;
        std::vector<float> values;
        float* row(int64_t t) { return values.data() + t * width; }
        const float* row(int64_t t) const { return values.data() + t * width; }
        float* append(int64_t rows);  // room for `rows` more, returned uninitialized
    };
    struct Stage {
        Frames input;  // padding rows, then the input frames
        int64_t computed = 0;
        bool input_ended = false;
    };

    void advance(size_t index);
    void end_input(Stage& stage) const;
    void take_output(size_t index, const float* out, int64_t count);

    const MelFsqCodec& codec_;
    const MelConvolutionStack& convolutions_;
    int64_t pad_ = 0;
    std::vector<Stage> stages_;       // one per convolution
    std::vector<Frames> residuals_;   // the stream each block adds to: one per block boundary
    Frames mel_;                      // denormalized log-mel, time-major
    std::vector<float> mel_mean_, mel_std_;
    std::vector<float> output_;       // one convolution's output rows
    std::vector<float> gelu_scratch_;
};

}  // namespace cadenza::mel_fsq
