#include "encodec_model.h"

#include <ATen/ops/linspace.h>
#include <ATen/ops/zeros.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "state_dict_file.h"

namespace cadenza::encodec {

namespace {

const EncodecConfig& validated(const EncodecConfig& config) {
    config.validate("EnCodec config");
    return config;
}

}  // namespace

EncodecModel::EncodecModel(const EncodecConfig& config, seanet::ParameterSource& source)
    : config_(validated(config)),
      encoder_(config.encoder, "encoder", source),
      quantizer_(config.quantizer, "quantizer", source),
      decoder_(config.decoder, "decoder", source),
      device_(quantizer_.codebook(0).device()) {}

EncodecModel EncodecModel::load(const EncodecConfig& config, const std::filesystem::path& checkpoint,
                                c10::Device device) {
    seanet::StateDictSource source(seanet::read_state_dict(checkpoint), checkpoint.string(), device);
    EncodecModel model(config, source);
    source.expect_all_taken();
    return model;
}

EncodecModel::Normalized EncodecModel::normalize(const at::Tensor& segment) const {
    if (!config_.normalize) return {segment, {}};
    const at::Tensor mono = segment.mean(1, true);
    const at::Tensor volume = mono.pow(2).mean(2, true).sqrt();
    const at::Tensor scale = 1e-8 + volume;
    return {segment / scale, scale.view({-1, 1})};
}

std::vector<EncodedSegment> EncodecModel::encode(const at::Tensor& audio, double bandwidth) const {
    if (audio.dim() != 3 || audio.size(1) != config_.channels || audio.size(2) < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "EnCodec encodes [batch, " + std::to_string(config_.channels) +
                                                     ", samples] audio with at least one sample");
    const int64_t codebooks = config_.codebooks_for_bandwidth(bandwidth);
    const int64_t length = audio.size(2);
    const int64_t segment_length = config_.segment_length().value_or(length);
    const int64_t stride = config_.segment_stride().value_or(length);
    const at::Tensor input = audio.to(device_, at::kFloat);
    std::vector<EncodedSegment> segments;
    for (int64_t offset = 0; offset < length; offset += stride) {
        const Normalized normalized = normalize(input.narrow(2, offset, std::min(segment_length, length - offset)));
        const at::Tensor codes = quantizer_.encode(embed(normalized.audio), codebooks);
        segments.push_back({codes.transpose(0, 1), normalized.scale});
    }
    return segments;
}

at::Tensor EncodecModel::decode_segment(const EncodedSegment& segment) const {
    if (segment.codes.dim() != 3)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "EnCodec decodes codes of shape [batch, codebooks, frames]");
    const at::Tensor embeddings = quantizer_.decode(segment.codes.to(device_).transpose(0, 1));
    const at::Tensor audio = decoder_.forward(embeddings);
    return segment.scale.defined() ? audio * segment.scale.to(device_).view({-1, 1, 1}) : audio;
}

at::Tensor EncodecModel::decode(const std::vector<EncodedSegment>& segments) const {
    if (segments.empty()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "EnCodec: nothing to decode");
    if (!config_.segment) {
        if (segments.size() != 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "a model without segments decodes exactly one segment");
        return decode_segment(segments.front());
    }
    std::vector<at::Tensor> frames;
    for (const EncodedSegment& segment : segments) frames.push_back(decode_segment(segment));
    return linear_overlap_add(frames, *config_.segment_stride());
}

at::Tensor linear_overlap_add(const std::vector<at::Tensor>& frames, int64_t stride) {
    const at::Tensor& first = frames.front();
    const int64_t total = stride * static_cast<int64_t>(frames.size() - 1) + frames.back().size(-1);
    const int64_t frame_length = first.size(-1);
    const at::Tensor t = at::linspace(0, 1, frame_length + 2, first.options()).narrow(0, 1, frame_length);
    const at::Tensor weight = 0.5 - (t - 0.5).abs();
    std::vector<int64_t> shape(first.sizes().begin(), first.sizes().end());
    shape.back() = total;
    at::Tensor sum_weight = at::zeros({total}, first.options());
    at::Tensor out = at::zeros(shape, first.options());
    int64_t offset = 0;
    for (const at::Tensor& frame : frames) {
        const int64_t length = frame.size(-1);
        if (length > frame_length)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "overlap-add: a segment is longer than the first one");
        const at::Tensor w = weight.narrow(0, 0, length);
        out.narrow(-1, offset, length).add_(w * frame);
        sum_weight.narrow(0, offset, length).add_(w);
        offset += stride;
    }
    if (sum_weight.min().item<float>() <= 0)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "overlap-add: segments leave a gap (stride larger than a segment)");
    return out / sum_weight;
}

}  // namespace cadenza::encodec
