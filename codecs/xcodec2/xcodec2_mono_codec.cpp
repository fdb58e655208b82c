#include "xcodec2_mono_codec.h"

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::xcodec2 {

XCodec2MonoCodec::XCodec2MonoCodec(std::unique_ptr<XCodec2Decoder> decoder) : decoder_(std::move(decoder)) {}

cdz_codec_info XCodec2MonoCodec::info() const {
    const XCodec2Config& config = decoder_->config();
    cdz_codec_info info{};
    info.struct_size = sizeof(info);
    info.sample_rate = static_cast<uint32_t>(config.sample_rate);
    info.frame_rate = config.frame_rate();
    info.codebook_count = 1;
    info.codebook_size = static_cast<uint32_t>(decoder_->quantizer().fsq().codebook_size());
    info.can_encode = 0;
    info.can_decode = 1;
    info.can_stream = 0;
    return info;
}

at::Tensor XCodec2MonoCodec::encode(const at::Tensor&) const {
    throw sdk::Error(CDZ_STATUS_UNSUPPORTED,
                "encode is not implemented: X-codec2's encoder needs the w2v-BERT 2.0 semantic model "
                "(facebook/w2v-bert-2.0, layer 16) and the BigCodec acoustic encoder (SnakeBeta, anti-aliased "
                "resampling), which this plugin does not have yet; it decodes codes only (can_encode = 0)");
}

at::Tensor XCodec2MonoCodec::decode(const at::Tensor& codes) const {
    if (codes.size(0) != 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "codes have " + std::to_string(codes.size(0)) + " codebooks; X-codec2 has 1");
    return decoder_->decode(codes).reshape({-1}).to(at::kCPU);
}

std::unique_ptr<codec_plugin::MonoDecodeStream> XCodec2MonoCodec::decode_stream() const {
    return std::make_unique<codec_plugin::DecodeOnFlushStream>(*this);
}

}  // namespace cadenza::xcodec2
