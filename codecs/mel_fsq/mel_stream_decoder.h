// Chunked decoding of a mel-FSQ code stream. A mel frame is final once the
// decoder's context (MelCodecConfig::decoder_context frames) has arrived
// after it (IncrementalMelDecoder computes each frame once); Griffin-Lim then runs on a window that reaches back
// `overlap_frames` into audio already emitted, starts those frames from the
// emitted audio's phases, and crossfades one hop into the previous window's
// continuation. The streamed audio has the length of whole decoding but not
// its samples (Griffin-Lim is iterative over its whole window).
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "incremental_mel_decoder.h"
#include "mel_fsq_codec.h"

namespace cadenza::mel_fsq {

struct StreamOptions {
    GriffinLimOptions griffin_lim;
    int64_t chunk_frames = 10;    // decode once this many new frames of audio are ready
    int64_t overlap_frames = 8;   // window frames reaching back into emitted audio
    // Griffin-Lim iterations of the last window (after the last codes: its
    // time is all the synthesis waits for once the loop is done); 0: as the
    // other windows.
    int64_t last_iterations = 0;
};

class MelStreamDecoder {
public:
    MelStreamDecoder(const MelFsqCodec& codec, StreamOptions options);

    // Appends codes [frames]; returns the audio that became final (maybe
    // empty). After `is_last`, the total emitted equals whole decoding's length.
    std::vector<float> push(const at::Tensor& codes, bool is_last);

    int64_t emitted_samples() const { return emitted_; }

private:
    const MelFsqCodec& codec_;
    StreamOptions options_;
    IncrementalMelDecoder mel_decoder_;
    int64_t frames_ = 0;          // codes pushed
    std::vector<float> history_;  // the emitted samples from history_start_ on
    int64_t history_start_ = 0;
    std::vector<float> tail_;     // the last window's continuation past emitted_, for the crossfade
    int64_t emitted_ = 0;
    bool finished_ = false;
};

}  // namespace cadenza::mel_fsq
