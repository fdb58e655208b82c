// X-codec2 behind the C ABI: codes [1, frames] (FSQ indices, 0..65535) ->
// mono 16 kHz audio [frames * 320]. Encoding is not implemented (it needs
// the w2v-BERT 2.0 semantic branch and the BigCodec encoder): encode
// returns CDZ_STATUS_UNSUPPORTED. The decoder attends over the whole
// sequence, so a stream decodes everything when the last chunk arrives.
#pragma once

#include <memory>

#include "codec_plugin_glue.h"
#include "xcodec2_decoder.h"

namespace cadenza::xcodec2 {

class XCodec2MonoCodec : public codec_plugin::MonoCodec {
public:
    explicit XCodec2MonoCodec(std::unique_ptr<XCodec2Decoder> decoder);

    cdz_codec_info info() const override;
    at::Tensor encode(const at::Tensor& samples) const override;  // throws CDZ_STATUS_UNSUPPORTED
    at::Tensor decode(const at::Tensor& codes) const override;
    std::unique_ptr<codec_plugin::MonoDecodeStream> decode_stream() const override;

private:
    std::unique_ptr<XCodec2Decoder> decoder_;
};

}  // namespace cadenza::xcodec2
