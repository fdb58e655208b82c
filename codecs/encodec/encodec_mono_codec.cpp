#include "encodec_mono_codec.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::encodec {

namespace {

at::Tensor mix_to_mono(const at::Tensor& audio) { return audio.mean(1)[0].to(at::kCPU); }  // [1, C, S] -> [S]

// The decoder run chunk by chunk: each chunk of codes becomes embeddings,
// the decoder's stream returns the samples that are final.
class CausalDecodeStream : public codec_plugin::MonoDecodeStream {
public:
    CausalDecodeStream(const EncodecModel& model, at::Tensor scale)
        : model_(model), stream_(model.decoder().stream()), scale_(std::move(scale)) {}

    at::Tensor decode(const at::Tensor& codes, bool is_last) override {
        at::Tensor audio;
        if (codes.size(1) > 0) {
            const at::Tensor embeddings = model_.quantizer().decode(codes.to(model_.device()).unsqueeze(1));
            audio = stream_->push(embeddings);
        }
        if (is_last) audio = seanet::concat_time(audio, stream_->flush());
        if (!seanet::has_samples(audio)) return at::empty({0}, at::TensorOptions().dtype(at::kFloat));
        if (scale_.defined()) audio = audio * scale_.to(audio.device()).view({-1, 1, 1});
        return mix_to_mono(audio);
    }

private:
    const EncodecModel& model_;
    std::unique_ptr<seanet::LayerStream> stream_;
    at::Tensor scale_;
};

}  // namespace

EncodecMonoCodec::EncodecMonoCodec(std::shared_ptr<const EncodecModel> model, double bandwidth, double decode_scale)
    : model_(std::move(model)),
      bandwidth_(bandwidth),
      codebooks_(model_->config().codebooks_for_bandwidth(bandwidth)),
      decode_scale_(decode_scale) {}

bool EncodecMonoCodec::streams_causally() const { return model_->decoder().can_stream() && !model_->config().segment; }

cdz_codec_info EncodecMonoCodec::info() const {
    const EncodecConfig& config = model_->config();
    cdz_codec_info info{};
    info.struct_size = sizeof(info);
    info.sample_rate = static_cast<uint32_t>(config.sample_rate);
    info.frame_rate = static_cast<double>(config.sample_rate) / static_cast<double>(config.hop_length());
    info.codebook_count = static_cast<uint32_t>(codebooks_);
    info.codebook_size = static_cast<uint32_t>(config.quantizer.bins);
    info.can_encode = 1;
    info.can_decode = 1;
    info.can_stream = streams_causally() ? 1 : 0;
    return info;
}

at::Tensor EncodecMonoCodec::scale_tensor() const {
    if (!model_->config().normalize) return {};
    return at::full({1, 1}, decode_scale_, at::TensorOptions().dtype(at::kFloat));
}

at::Tensor EncodecMonoCodec::encode(const at::Tensor& samples) const {
    const int64_t channels = model_->config().channels;
    const at::Tensor audio = samples.view({1, 1, -1}).expand({1, channels, samples.size(0)});
    std::vector<at::Tensor> codes;
    for (const EncodedSegment& segment : model_->encode(audio, bandwidth_)) codes.push_back(segment.codes[0]);
    return at::cat(codes, 1).to(at::kCPU);
}

std::vector<EncodedSegment> EncodecMonoCodec::segments_of(const at::Tensor& codes) const {
    const EncodecConfig& config = model_->config();
    if (codes.size(0) < 1 || codes.size(0) > config.quantizer.n_q)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "codes have " + std::to_string(codes.size(0)) +
                                                     " codebooks; the model decodes 1 to " +
                                                     std::to_string(config.quantizer.n_q));
    const int64_t frames = codes.size(1);
    const int64_t per_segment = config.segment_frames().value_or(frames);
    std::vector<EncodedSegment> segments;
    for (int64_t start = 0; start < frames; start += per_segment)
        segments.push_back({codes.narrow(1, start, std::min(per_segment, frames - start)).unsqueeze(0), scale_tensor()});
    return segments;
}

at::Tensor EncodecMonoCodec::decode(const at::Tensor& codes) const {
    return mix_to_mono(model_->decode(segments_of(codes)));
}

std::unique_ptr<codec_plugin::MonoDecodeStream> EncodecMonoCodec::decode_stream() const {
    if (streams_causally()) return std::make_unique<CausalDecodeStream>(*model_, scale_tensor());
    return std::make_unique<codec_plugin::DecodeOnFlushStream>(*this);
}

}  // namespace cadenza::encodec
