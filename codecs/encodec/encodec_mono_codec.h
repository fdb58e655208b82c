// EnCodec behind the C ABI, which carries mono audio and one code tensor:
//  - encode duplicates the mono input to every channel of a stereo model;
//    the codes of successive segments are concatenated along frames;
//  - decode cuts the frames back into segments of segment_frames() (the
//    last one shorter), decodes and overlap-adds them, and averages the
//    channels. The per-segment scales of a normalizing model cannot cross
//    the ABI, so decode multiplies every segment by `decode_scale` instead;
//  - a causal model without segments decodes chunk by chunk with the same
//    result as whole decoding; any other decodes everything at the end.
#pragma once

#include <memory>

#include "codec_plugin_glue.h"
#include "encodec_model.h"

namespace cadenza::encodec {

class EncodecMonoCodec : public codec_plugin::MonoCodec {
public:
    EncodecMonoCodec(std::shared_ptr<const EncodecModel> model, double bandwidth, double decode_scale);

    cdz_codec_info info() const override;
    at::Tensor encode(const at::Tensor& samples) const override;
    at::Tensor decode(const at::Tensor& codes) const override;
    std::unique_ptr<codec_plugin::MonoDecodeStream> decode_stream() const override;

    bool streams_causally() const;
    // [codebooks, frames] -> the segments decode() takes, with decode_scale.
    std::vector<EncodedSegment> segments_of(const at::Tensor& codes) const;
    at::Tensor scale_tensor() const;  // [1, 1], undefined when the model does not normalize

private:
    std::shared_ptr<const EncodecModel> model_;
    double bandwidth_;
    int64_t codebooks_;
    double decode_scale_;
};

}  // namespace cadenza::encodec
