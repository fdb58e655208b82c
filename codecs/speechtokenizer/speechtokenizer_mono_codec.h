// SpeechTokenizer behind the C ABI: mono audio [samples] <-> codes
// [codebooks, frames] of the first `codebooks` quantizers. The decoder is
// not causal, so a stream decodes everything when the last chunk arrives.
#pragma once

#include <memory>

#include "codec_plugin_glue.h"
#include "speechtokenizer_model.h"

namespace cadenza::speechtokenizer {

class SpeechTokenizerMonoCodec : public codec_plugin::MonoCodec {
public:
    SpeechTokenizerMonoCodec(std::unique_ptr<SpeechTokenizerModel> model, int64_t codebooks);

    cdz_codec_info info() const override;
    at::Tensor encode(const at::Tensor& samples) const override;
    // Decodes 1 to n_q codebooks (layers 0..k-1).
    at::Tensor decode(const at::Tensor& codes) const override;
    std::unique_ptr<codec_plugin::MonoDecodeStream> decode_stream() const override;

private:
    std::unique_ptr<SpeechTokenizerModel> model_;
    int64_t codebooks_;
};

}  // namespace cadenza::speechtokenizer
