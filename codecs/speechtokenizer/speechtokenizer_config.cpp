#include "speechtokenizer_config.h"

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "json_fields.h"

namespace cadenza::speechtokenizer {

using seanet::json_bool;
using seanet::json_int;
using seanet::json_int_list;
using seanet::json_string;

SpeechTokenizerConfig SpeechTokenizerConfig::from_json(const nlohmann::json& json, const std::string& where) {
    if (!json.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + " must be a JSON object");
    // SpeechTokenizer.__init__ reads each with config.get(); a missing one
    // would reach the modules as None and fail there.
    auto field = [&](const char* key) -> const nlohmann::json& {
        if (!json.contains(key)) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": missing key '" + key + "'");
        return json[key];
    };
    auto at = [&](const char* key) { return where + "." + key; };

    // The arguments SpeechTokenizer passes to SEANetEncoder / SEANetDecoder;
    // the rest keep the reference defaults (non-causal, weight_norm, reflect).
    nlohmann::json seanet = {
        {"n_filters", json_int(field("n_filters"), at("n_filters"))},
        {"dimension", json_int(field("dimension"), at("dimension"))},
        {"ratios", json_int_list(field("strides"), at("strides"))},
        {"lstm", json_int(field("lstm_layers"), at("lstm_layers"))},
        {"dilation_base", json_int(field("dilation_base"), at("dilation_base"))},
        {"residual_kernel_size", json_int(field("residual_kernel_size"), at("residual_kernel_size"))},
        {"n_residual_layers", json_int(field("n_residual_layers"), at("n_residual_layers"))},
        {"activation", json_string(field("activation"), at("activation"))},
        // The reference default activation_params, which SpeechTokenizer never overrides.
        {"activation_params", {{"alpha", 1.0}}},
    };
    SpeechTokenizerConfig config;
    seanet::apply_seanet_arguments(config.decoder, seanet, true, where);
    seanet["bidirectional"] = json_bool(field("bidirectional"), at("bidirectional"));
    seanet::apply_seanet_arguments(config.encoder, seanet, false, where);
    config.encoder.validate(where + " (encoder)");
    config.decoder.validate(where + " (decoder)");
    if (config.encoder.bidirectional && config.encoder.lstm == 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": bidirectional needs lstm_layers > 0");

    config.sample_rate = json_int(field("sample_rate"), at("sample_rate"));
    config.semantic_dimension = json_int(field("semantic_dimension"), at("semantic_dimension"));
    config.quantizer.dimension = config.encoder.dimension;
    config.quantizer.n_q = json_int(field("n_q"), at("n_q"));
    config.quantizer.bins = json_int(field("codebook_size"), at("codebook_size"));
    if (config.sample_rate < 1) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, at("sample_rate") + " must be at least 1");
    if (config.semantic_dimension < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, at("semantic_dimension") + " must be at least 1");
    if (config.quantizer.n_q < 1 || config.quantizer.bins < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": n_q and codebook_size must be at least 1");
    return config;
}

SpeechTokenizerConfig SpeechTokenizerConfig::from_file(const std::filesystem::path& path) {
    return from_json(seanet::read_json_file(path), path.string());
}

}  // namespace cadenza::speechtokenizer
