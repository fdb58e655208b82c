// HuBERT units behind the C ABI: mono 16 kHz audio [samples] -> codes
// [1, frames], the nearest k-means centroid of one transformer layer's
// output per frame. Encode only.
#pragma once

#include <memory>

#include "codec_plugin_glue.h"
#include "hubert_model.h"

namespace cadenza::hubert {

class HubertMonoCodec : public codec_plugin::MonoCodec {
public:
    // `layer`: 1-based transformer layer whose output the centroids cluster.
    HubertMonoCodec(std::unique_ptr<HubertModel> model, KMeansTokenizer kmeans, int64_t layer);

    cdz_codec_info info() const override;
    at::Tensor encode(const at::Tensor& samples) const override;
    // Both throw CDZ_STATUS_UNSUPPORTED: HuBERT units cannot be turned back into audio.
    at::Tensor decode(const at::Tensor& codes) const override;
    std::unique_ptr<codec_plugin::MonoDecodeStream> decode_stream() const override;

    int64_t layer() const { return layer_; }

private:
    std::unique_ptr<HubertModel> model_;
    KMeansTokenizer kmeans_;
    int64_t layer_;
};

// The message decode and stream_decode return.
extern const char* const decode_unsupported_message;

}  // namespace cadenza::hubert
