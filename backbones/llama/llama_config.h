// The hyperparameters of a LLaMA-architecture model, read from a Hugging Face
// config.json (LlamaForCausalLM, and Qwen2ForCausalLM with attention_bias).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cadenza::llama {

struct RopeScaling {
    // "" (none) or "llama3" (Llama 3.1/3.2: frequencies rescaled by band).
    std::string type;
    double factor = 1.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    int64_t original_max_position_embeddings = 8192;
};

struct LlamaConfig {
    int64_t vocab_size = 0;
    int64_t hidden_size = 0;
    int64_t intermediate_size = 0;
    int64_t num_hidden_layers = 0;
    int64_t num_attention_heads = 0;
    int64_t num_key_value_heads = 0;
    int64_t head_dim = 0;  // hidden_size / num_attention_heads unless given
    int64_t max_position_embeddings = 2048;
    double rms_norm_eps = 1e-5;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling;
    bool tie_word_embeddings = false;
    bool attention_bias = false;  // Qwen2: biases on q, k and v

    // Throws cadenza::sdk::Error naming `where` and the key on a missing key, a
    // wrong type or an inconsistent value (e.g. heads not dividing).
    static LlamaConfig from_json(const nlohmann::json& json, const std::string& where);
    // The text of a config.json, parsed strictly (duplicate keys, trailing
    // bytes and nesting are errors) and then read as from_json.
    static LlamaConfig parse(const std::string& text, const std::string& where);
    static LlamaConfig from_file(const std::filesystem::path& path);
    nlohmann::json to_json() const;
    void save(const std::filesystem::path& path) const;

    int64_t query_width() const { return num_attention_heads * head_dim; }
    int64_t key_value_width() const { return num_key_value_heads * head_dim; }
    // Parameters, embedding and head included (the head once if tied).
    int64_t parameter_count() const;
};

}  // namespace cadenza::llama
