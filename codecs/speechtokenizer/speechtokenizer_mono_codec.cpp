#include "speechtokenizer_mono_codec.h"

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::speechtokenizer {

SpeechTokenizerMonoCodec::SpeechTokenizerMonoCodec(std::unique_ptr<SpeechTokenizerModel> model, int64_t codebooks)
    : model_(std::move(model)), codebooks_(codebooks) {}

cdz_codec_info SpeechTokenizerMonoCodec::info() const {
    const SpeechTokenizerConfig& config = model_->config();
    cdz_codec_info info{};
    info.struct_size = sizeof(info);
    info.sample_rate = static_cast<uint32_t>(config.sample_rate);
    info.frame_rate = static_cast<double>(config.sample_rate) / static_cast<double>(config.hop_length());
    info.codebook_count = static_cast<uint32_t>(codebooks_);
    info.codebook_size = static_cast<uint32_t>(config.quantizer.bins);
    info.can_encode = 1;
    info.can_decode = 1;
    info.can_stream = 0;
    return info;
}

at::Tensor SpeechTokenizerMonoCodec::encode(const at::Tensor& samples) const {
    return model_->encode(samples.view({1, 1, -1}), codebooks_).select(1, 0).to(at::kCPU);
}

at::Tensor SpeechTokenizerMonoCodec::decode(const at::Tensor& codes) const {
    const int64_t layers = model_->config().quantizer.n_q;
    if (codes.size(0) < 1 || codes.size(0) > layers)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "codes have " + std::to_string(codes.size(0)) +
                                                     " codebooks; the model decodes 1 to " + std::to_string(layers));
    return model_->decode(codes.unsqueeze(1)).reshape({-1}).to(at::kCPU);
}

std::unique_ptr<codec_plugin::MonoDecodeStream> SpeechTokenizerMonoCodec::decode_stream() const {
    return std::make_unique<codec_plugin::DecodeOnFlushStream>(*this);
}

}  // namespace cadenza::speechtokenizer
