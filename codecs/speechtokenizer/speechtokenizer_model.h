// SpeechTokenizer (ZhangXInFD/SpeechTokenizer): a SEANet encoder with a
// bidirectional LSTM, an 8-layer RVQ whose first layer carries the
// semantic ("RVQ-1") tokens, a Linear transform of those to the semantic
// dimension, and a SEANet decoder.
#pragma once

#include <filesystem>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "parameter_source.h"
#include "residual_vector_quantizer.h"
#include "seanet_decoder.h"
#include "seanet_encoder.h"
#include "speechtokenizer_config.h"

namespace cadenza::speechtokenizer {

class SpeechTokenizerModel {
public:
    // Takes "encoder.*", "transform.*" (when the dimensions differ),
    // "quantizer.*" and "decoder.*" from `source`.
    SpeechTokenizerModel(const SpeechTokenizerConfig& config, seanet::ParameterSource& source);
    static SpeechTokenizerModel load(const SpeechTokenizerConfig& config, const std::filesystem::path& checkpoint,
                                     c10::Device device);

    at::Tensor embed(const at::Tensor& audio) const;  // [batch, 1, samples] -> [batch, dimension, frames]
    // The reference's encode(x, n_q, st): codes int64 [n_q - first, batch, frames].
    at::Tensor encode(const at::Tensor& audio, int64_t n_q, int64_t first = 0) const;
    // The reference's decode(codes, st): [batch, 1, frames * hop].
    at::Tensor decode(const at::Tensor& codes, int64_t first = 0) const;
    // The third output of forward: the transform applied to the RVQ-1
    // vectors of `first_layer_codes` [batch, frames] -> [batch, frames, semantic_dimension].
    at::Tensor semantic_features(const at::Tensor& first_layer_codes) const;

    const SpeechTokenizerConfig& config() const { return config_; }
    const seanet::ResidualVectorQuantizer& quantizer() const { return quantizer_; }
    c10::Device device() const { return device_; }

private:
    SpeechTokenizerConfig config_;
    seanet::SeanetEncoder encoder_;
    at::Tensor transform_weight_, transform_bias_;
    seanet::ResidualVectorQuantizer quantizer_;
    seanet::SeanetDecoder decoder_;
    c10::Device device_;
};

}  // namespace cadenza::speechtokenizer
