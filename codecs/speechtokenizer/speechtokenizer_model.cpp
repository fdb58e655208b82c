#include "speechtokenizer_model.h"

#include <ATen/ops/linear.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "state_dict_file.h"

namespace cadenza::speechtokenizer {

namespace {

at::Tensor take_transform(const SpeechTokenizerConfig& config, seanet::ParameterSource& source, bool bias) {
    if (!config.has_transform()) return {};
    if (bias) return source.take("transform.bias", {config.semantic_dimension}, seanet::ParameterRole::bias);
    return source.take("transform.weight", {config.semantic_dimension, config.quantizer.dimension},
                       seanet::ParameterRole::linear_weight);
}

}  // namespace

SpeechTokenizerModel::SpeechTokenizerModel(const SpeechTokenizerConfig& config, seanet::ParameterSource& source)
    : config_(config),
      encoder_(config.encoder, "encoder", source),
      transform_weight_(take_transform(config, source, false)),
      transform_bias_(take_transform(config, source, true)),
      quantizer_(config.quantizer, "quantizer", source),
      decoder_(config.decoder, "decoder", source),
      device_(quantizer_.codebook(0).device()) {}

SpeechTokenizerModel SpeechTokenizerModel::load(const SpeechTokenizerConfig& config,
                                                const std::filesystem::path& checkpoint, c10::Device device) {
    seanet::StateDictSource source(seanet::read_state_dict(checkpoint), checkpoint.string(), device);
    SpeechTokenizerModel model(config, source);
    source.expect_all_taken();
    return model;
}

at::Tensor SpeechTokenizerModel::embed(const at::Tensor& audio) const {
    if (audio.dim() != 3 || audio.size(1) != config_.encoder.channels || audio.size(2) < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "SpeechTokenizer encodes [batch, 1, samples] audio");
    return encoder_.forward(audio.to(device_, at::kFloat));
}

at::Tensor SpeechTokenizerModel::encode(const at::Tensor& audio, int64_t n_q, int64_t first) const {
    return quantizer_.encode(embed(audio), n_q, first);
}

at::Tensor SpeechTokenizerModel::decode(const at::Tensor& codes, int64_t first) const {
    return decoder_.forward(quantizer_.decode(codes.to(device_), first));
}

at::Tensor SpeechTokenizerModel::semantic_features(const at::Tensor& first_layer_codes) const {
    const at::Tensor vectors = quantizer_.decode(first_layer_codes.to(device_).unsqueeze(0)).transpose(1, 2);
    if (!config_.has_transform()) return vectors;
    return at::linear(vectors, transform_weight_, transform_bias_);
}

}  // namespace cadenza::speechtokenizer
