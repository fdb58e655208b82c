#include "hubert_config.h"

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "json_fields.h"

namespace cadenza::hubert {

using seanet::json_bool;
using seanet::json_int;
using seanet::json_int_list;
using seanet::json_number;
using seanet::json_string;

int64_t HubertConfig::hop_length() const {
    int64_t hop = 1;
    for (int64_t s : conv_stride) hop *= s;
    return hop;
}

int64_t HubertConfig::frames(int64_t samples) const {
    int64_t length = samples;
    for (size_t i = 0; i < conv_kernel.size(); ++i) {
        if (length < conv_kernel[i]) return 0;
        length = (length - conv_kernel[i]) / conv_stride[i] + 1;
    }
    return length;
}

int64_t HubertConfig::min_samples() const {
    int64_t length = 1;  // one output frame, walked back through the layers
    for (size_t i = conv_kernel.size(); i-- > 0;) length = (length - 1) * conv_stride[i] + conv_kernel[i];
    return length;
}

bool HubertConfig::is_official(const std::string& name) {
    return name == "hubert_base" || name == "hubert_large" || name == "hubert_xlarge";
}

HubertConfig HubertConfig::official(const std::string& name) {
    HubertConfig c;
    if (name == "hubert_base") return c;
    if (name == "hubert_large" || name == "hubert_xlarge") {
        const bool xlarge = name == "hubert_xlarge";
        c.extractor_norm = ExtractorNorm::layer;
        c.layer_norm_first = true;
        c.hidden_size = xlarge ? 1280 : 1024;
        c.num_hidden_layers = xlarge ? 48 : 24;
        c.num_attention_heads = 16;
        c.intermediate_size = xlarge ? 5120 : 4096;
        return c;
    }
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                "unknown HuBERT config '" + name + "' (hubert_base, hubert_large, hubert_xlarge or a config.json file)");
}

HubertConfig HubertConfig::from_json(const nlohmann::json& json, const std::string& origin) {
    if (!json.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, origin + ": expected a JSON object");
    HubertConfig c;
    auto where = [&](const char* key) { return origin + ": " + key; };
    auto has = [&](const char* key) { return json.contains(key) && !json.at(key).is_null(); };
    if (has("conv_dim")) c.conv_dim = json_int_list(json.at("conv_dim"), where("conv_dim"));
    if (has("conv_kernel")) c.conv_kernel = json_int_list(json.at("conv_kernel"), where("conv_kernel"));
    if (has("conv_stride")) c.conv_stride = json_int_list(json.at("conv_stride"), where("conv_stride"));
    if (has("conv_bias")) c.conv_bias = json_bool(json.at("conv_bias"), where("conv_bias"));
    if (has("feat_extract_norm")) {
        const std::string norm = json_string(json.at("feat_extract_norm"), where("feat_extract_norm"));
        if (norm == "group") c.extractor_norm = ExtractorNorm::group;
        else if (norm == "layer") c.extractor_norm = ExtractorNorm::layer;
        else throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where("feat_extract_norm") + ": '" + norm + "' is not \"group\" or \"layer\"");
    }
    for (const char* key : {"feat_extract_activation", "hidden_act"}) {
        if (!has(key)) continue;
        const std::string act = json_string(json.at(key), where(key));
        if (act != "gelu")
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where(key) + ": '" + act +
                                                       "' is not supported (torchaudio's HuBERT uses GELU: \"gelu\")");
    }
    if (has("hidden_size")) c.hidden_size = json_int(json.at("hidden_size"), where("hidden_size"));
    if (has("num_hidden_layers")) c.num_hidden_layers = json_int(json.at("num_hidden_layers"), where("num_hidden_layers"));
    if (has("num_attention_heads"))
        c.num_attention_heads = json_int(json.at("num_attention_heads"), where("num_attention_heads"));
    if (has("intermediate_size")) c.intermediate_size = json_int(json.at("intermediate_size"), where("intermediate_size"));
    if (has("num_conv_pos_embeddings"))
        c.num_conv_pos_embeddings = json_int(json.at("num_conv_pos_embeddings"), where("num_conv_pos_embeddings"));
    if (has("num_conv_pos_embedding_groups"))
        c.num_conv_pos_embedding_groups =
            json_int(json.at("num_conv_pos_embedding_groups"), where("num_conv_pos_embedding_groups"));
    if (has("do_stable_layer_norm"))
        c.layer_norm_first = json_bool(json.at("do_stable_layer_norm"), where("do_stable_layer_norm"));
    if (has("feat_proj_layer_norm"))
        c.feat_proj_layer_norm = json_bool(json.at("feat_proj_layer_norm"), where("feat_proj_layer_norm"));
    if (has("layer_norm_eps")) c.layer_norm_eps = json_number(json.at("layer_norm_eps"), where("layer_norm_eps"));
    if (has("conv_pos_batch_norm") && json_bool(json.at("conv_pos_batch_norm"), where("conv_pos_batch_norm")))
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where("conv_pos_batch_norm") + ": not supported (torchaudio has no such layer)");
    if (has("model_type")) {
        const std::string type = json_string(json.at("model_type"), where("model_type"));
        if (type != "hubert" && type != "wav2vec2")
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where("model_type") + ": '" + type + "' is not a HuBERT config");
    }
    c.validate(origin);
    return c;
}

HubertConfig HubertConfig::from_file(const std::filesystem::path& path) {
    return from_json(seanet::read_json_file(path), path.string());
}

void HubertConfig::validate(const std::string& origin) const {
    auto fail = [&](const std::string& what) { throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, origin + ": " + what); };
    if (conv_dim.empty()) fail("conv_dim is empty");
    if (conv_kernel.size() != conv_dim.size() || conv_stride.size() != conv_dim.size())
        fail("conv_dim, conv_kernel and conv_stride must have the same length");
    for (size_t i = 0; i < conv_dim.size(); ++i)
        if (conv_dim[i] < 1 || conv_kernel[i] < 1 || conv_stride[i] < 1)
            fail("conv_dim / conv_kernel / conv_stride[" + std::to_string(i) + "] must be positive");
    if (hidden_size < 1 || num_hidden_layers < 1 || num_attention_heads < 1 || intermediate_size < 1)
        fail("hidden_size, num_hidden_layers, num_attention_heads and intermediate_size must be positive");
    if (hidden_size % num_attention_heads != 0)
        fail("hidden_size " + std::to_string(hidden_size) + " is not a multiple of num_attention_heads " +
             std::to_string(num_attention_heads));
    if (num_conv_pos_embeddings < 1 || num_conv_pos_embedding_groups < 1 ||
        hidden_size % num_conv_pos_embedding_groups != 0)
        fail("num_conv_pos_embedding_groups must divide hidden_size and num_conv_pos_embeddings be positive");
    if (!(layer_norm_eps > 0)) fail("layer_norm_eps must be positive");
}

}  // namespace cadenza::hubert
