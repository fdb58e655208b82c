// SpeechTokenizer's model configuration, read from its own config.json
// (config/spt_base_cfg.json in ZhangXInFD/SpeechTokenizer): the SEANet
// encoder (bidirectional LSTM allowed), the decoder (always
// unidirectional), the RVQ and the semantic transform. Training-only keys
// are ignored.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "residual_vector_quantizer.h"
#include "seanet_config.h"

namespace cadenza::speechtokenizer {

struct SpeechTokenizerConfig {
    int64_t sample_rate = 16000;
    seanet::SeanetConfig encoder;
    seanet::SeanetConfig decoder;
    seanet::QuantizerConfig quantizer;
    int64_t semantic_dimension = 768;

    // The reference uses nn.Identity when the two dimensions are equal.
    bool has_transform() const { return semantic_dimension != quantizer.dimension; }
    int64_t hop_length() const { return encoder.hop_length(); }

    static SpeechTokenizerConfig from_json(const nlohmann::json& json, const std::string& where);
    static SpeechTokenizerConfig from_file(const std::filesystem::path& path);
};

}  // namespace cadenza::speechtokenizer
