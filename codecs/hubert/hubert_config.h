// The HuBERT configuration: Hugging Face HubertConfig fields (config.json)
// or a built-in official size (hubert_base, hubert_large, hubert_xlarge, as
// torchaudio's builders make them). See docs/codecs.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cadenza::hubert {

enum class ExtractorNorm { group, layer };  // group: GroupNorm after conv 0 only; layer: LayerNorm after every conv

struct HubertConfig {
    std::vector<int64_t> conv_dim{512, 512, 512, 512, 512, 512, 512};
    std::vector<int64_t> conv_kernel{10, 3, 3, 3, 3, 2, 2};
    std::vector<int64_t> conv_stride{5, 2, 2, 2, 2, 2, 2};
    bool conv_bias = false;
    ExtractorNorm extractor_norm = ExtractorNorm::group;
    int64_t hidden_size = 768;
    int64_t num_hidden_layers = 12;
    int64_t num_attention_heads = 12;
    int64_t intermediate_size = 3072;
    int64_t num_conv_pos_embeddings = 128;
    int64_t num_conv_pos_embedding_groups = 16;
    bool layer_norm_first = false;    // do_stable_layer_norm
    bool feat_proj_layer_norm = true;
    double layer_norm_eps = 1e-5;
    int64_t sample_rate = 16000;

    int64_t hop_length() const;  // product of conv_stride
    // The fewest samples that give one frame.
    int64_t min_samples() const;
    // Frames for `samples` input samples (0 when too short).
    int64_t frames(int64_t samples) const;

    // "hubert_base", "hubert_large", "hubert_xlarge".
    static HubertConfig official(const std::string& name);
    static bool is_official(const std::string& name);
    // Hugging Face HubertConfig fields; missing fields take HubertConfig's
    // defaults, unknown fields are ignored. Throws cadenza::sdk::Error naming the field.
    static HubertConfig from_json(const nlohmann::json& json, const std::string& origin);
    static HubertConfig from_file(const std::filesystem::path& path);

    void validate(const std::string& origin) const;
};

}  // namespace cadenza::hubert
