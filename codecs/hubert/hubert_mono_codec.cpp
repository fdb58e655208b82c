#include "hubert_mono_codec.h"

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::hubert {

const char* const decode_unsupported_message =
    "HuBERT units are encode-only (can_decode = 0): there is no decoder from units back to audio; "
    "use a codec that decodes (codec.encodec, codec.speechtokenizer) for synthesis";

HubertMonoCodec::HubertMonoCodec(std::unique_ptr<HubertModel> model, KMeansTokenizer kmeans, int64_t layer)
    : model_(std::move(model)), kmeans_(std::move(kmeans)), layer_(layer) {
    const HubertConfig& config = model_->config();
    if (layer_ < 1 || layer_ > config.num_hidden_layers)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "layer " + std::to_string(layer_) + " is out of range: the model has layers 1 to " +
                                                   std::to_string(config.num_hidden_layers) + " (1-based)");
    if (kmeans_.dimension() != config.hidden_size)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "the k-means centroids have dimension " + std::to_string(kmeans_.dimension()) +
                                                   " but the model's hidden_size is " + std::to_string(config.hidden_size));
}

cdz_codec_info HubertMonoCodec::info() const {
    const HubertConfig& config = model_->config();
    cdz_codec_info info{};
    info.struct_size = sizeof(info);
    info.sample_rate = static_cast<uint32_t>(config.sample_rate);
    info.frame_rate = static_cast<double>(config.sample_rate) / static_cast<double>(config.hop_length());
    info.codebook_count = 1;
    info.codebook_size = static_cast<uint32_t>(kmeans_.size());
    info.can_encode = 1;
    info.can_decode = 0;
    info.can_stream = 0;
    return info;
}

at::Tensor HubertMonoCodec::encode(const at::Tensor& samples) const {
    const std::vector<at::Tensor> layers = model_->extract_features(samples.reshape({1, -1}), layer_);
    return kmeans_.assign(layers.back()).to(at::kCPU, at::kLong);  // [1, frames]
}

at::Tensor HubertMonoCodec::decode(const at::Tensor&) const {
    throw sdk::Error(CDZ_STATUS_UNSUPPORTED, decode_unsupported_message);
}

std::unique_ptr<codec_plugin::MonoDecodeStream> HubertMonoCodec::decode_stream() const {
    throw sdk::Error(CDZ_STATUS_UNSUPPORTED, decode_unsupported_message);
}

}  // namespace cadenza::hubert
