#include "llama_config.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "strict_json.h"

namespace cadenza::llama {
namespace {

template <typename T>
T required(const nlohmann::json& json, const char* key, const std::string& where) {
    if (!json.contains(key)) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": missing key '" + key + "'");
    // nlohmann converts 256.5 to the integer 256 and true to 1.
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        if (!json.at(key).is_number_integer())
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": key '" + key + "' must be a whole number, not " +
                                                       json.at(key).dump());
    }
    if constexpr (std::is_same_v<T, bool>) {
        if (!json.at(key).is_boolean())
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": key '" + key + "' must be true or false");
    }
    try {
        return json.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": key '" + key + "' has the wrong type");
    }
}

template <typename T>
T optional(const nlohmann::json& json, const char* key, T fallback, const std::string& where) {
    if (!json.contains(key) || json.at(key).is_null()) return fallback;
    return required<T>(json, key, where);
}

}  // namespace

LlamaConfig LlamaConfig::from_json(const nlohmann::json& json, const std::string& where) {
    if (!json.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": not a JSON object");
    LlamaConfig c;
    c.vocab_size = required<int64_t>(json, "vocab_size", where);
    c.hidden_size = required<int64_t>(json, "hidden_size", where);
    c.intermediate_size = required<int64_t>(json, "intermediate_size", where);
    c.num_hidden_layers = required<int64_t>(json, "num_hidden_layers", where);
    c.num_attention_heads = required<int64_t>(json, "num_attention_heads", where);
    c.num_key_value_heads = optional<int64_t>(json, "num_key_value_heads", c.num_attention_heads, where);
    c.head_dim = optional<int64_t>(json, "head_dim", c.num_attention_heads > 0 ? c.hidden_size / c.num_attention_heads : 0,
                                   where);
    c.max_position_embeddings = optional<int64_t>(json, "max_position_embeddings", 2048, where);
    c.rms_norm_eps = optional<double>(json, "rms_norm_eps", 1e-5, where);
    c.rope_theta = optional<double>(json, "rope_theta", 10000.0, where);
    c.tie_word_embeddings = optional<bool>(json, "tie_word_embeddings", false, where);
    c.attention_bias = optional<bool>(json, "attention_bias", false, where);
    const std::string model_type = optional<std::string>(json, "model_type", "llama", where);
    if (model_type != "llama" && model_type != "qwen2")
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": model_type '" + model_type +
                                                "' is not supported (backbone.llama reads 'llama' and 'qwen2')");
    if (json.contains("architectures") && !json.at("architectures").is_null()) {
        const auto architectures = required<std::vector<std::string>>(json, "architectures", where);
        for (const auto& architecture : architectures)
            if (architecture != "LlamaForCausalLM" && architecture != "Qwen2ForCausalLM")
                throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": architecture '" + architecture +
                                                        "' is not supported (LlamaForCausalLM, Qwen2ForCausalLM)");
    }
    const std::string activation = optional<std::string>(json, "hidden_act", "silu", where);
    if (activation != "silu")
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": hidden_act '" + activation +
                                                "' is not supported (LLaMA's MLP uses 'silu')");
    if (model_type == "qwen2" && !json.contains("attention_bias")) c.attention_bias = true;
    if (json.contains("rope_scaling") && !json.at("rope_scaling").is_null()) {
        const auto& scaling = json.at("rope_scaling");
        const std::string scaling_where = where + ": rope_scaling";
        c.rope_scaling.type = optional<std::string>(scaling, "rope_type", optional<std::string>(scaling, "type", "", scaling_where),
                                                    scaling_where);
        if (c.rope_scaling.type == "default") c.rope_scaling.type.clear();
        if (!c.rope_scaling.type.empty() && c.rope_scaling.type != "llama3")
            throw sdk::Error(CDZ_STATUS_UNSUPPORTED, scaling_where + ": rope_type '" + c.rope_scaling.type +
                                                    "' is not supported (only 'llama3')");
        c.rope_scaling.factor = optional<double>(scaling, "factor", 1.0, scaling_where);
        c.rope_scaling.low_freq_factor = optional<double>(scaling, "low_freq_factor", 1.0, scaling_where);
        c.rope_scaling.high_freq_factor = optional<double>(scaling, "high_freq_factor", 4.0, scaling_where);
        c.rope_scaling.original_max_position_embeddings =
            optional<int64_t>(scaling, "original_max_position_embeddings", 8192, scaling_where);
    }

    auto positive = [&](int64_t value, const char* key) {
        if (value <= 0) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": '" + key + "' must be positive");
    };
    positive(c.vocab_size, "vocab_size");
    positive(c.hidden_size, "hidden_size");
    positive(c.intermediate_size, "intermediate_size");
    positive(c.num_hidden_layers, "num_hidden_layers");
    positive(c.num_attention_heads, "num_attention_heads");
    positive(c.num_key_value_heads, "num_key_value_heads");
    positive(c.head_dim, "head_dim");
    // Limits far above any LLaMA published (Llama 3.1 405B: hidden 16,384,
    // 126 layers), so that no size product below overflows.
    auto at_most = [&](int64_t value, int64_t limit, const char* key) {
        if (value > limit)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": '" + key + "' " + std::to_string(value) + " exceeds " +
                                                       std::to_string(limit) + " (cadenza's limit)");
    };
    at_most(c.vocab_size, 2147483647, "vocab_size");  // token ids are int32
    at_most(c.hidden_size, 1 << 20, "hidden_size");
    at_most(c.intermediate_size, 1 << 22, "intermediate_size");
    at_most(c.num_hidden_layers, 1 << 12, "num_hidden_layers");
    at_most(c.num_attention_heads, 1 << 16, "num_attention_heads");
    at_most(c.num_key_value_heads, 1 << 16, "num_key_value_heads");
    at_most(c.head_dim, 1 << 16, "head_dim");
    at_most(c.query_width(), 1 << 20, "num_attention_heads * head_dim");
    if (c.num_attention_heads % c.num_key_value_heads != 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": num_attention_heads (" + std::to_string(c.num_attention_heads) +
                                                   ") is not a multiple of num_key_value_heads (" +
                                                   std::to_string(c.num_key_value_heads) + ")");
    // Rotary tables are computed for every position up front.
    constexpr int64_t max_positions_limit = 1 << 20;
    if (c.max_position_embeddings <= 0 || c.max_position_embeddings > max_positions_limit)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": max_position_embeddings " +
                                                   std::to_string(c.max_position_embeddings) + " is not in 1.." +
                                                   std::to_string(max_positions_limit) +
                                                   " (the backbone's max_positions sets a shorter limit)");
    if (c.head_dim % 2 != 0) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": head_dim must be even for rotary embeddings");
    if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 0) || !std::isfinite(c.rms_norm_eps) || !std::isfinite(c.rope_theta))
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": rms_norm_eps and rope_theta must be positive and finite");
    if (!c.rope_scaling.type.empty()) {
        const RopeScaling& r = c.rope_scaling;
        const bool finite = std::isfinite(r.factor) && std::isfinite(r.low_freq_factor) && std::isfinite(r.high_freq_factor);
        if (!finite || !(r.factor > 0) || !(r.low_freq_factor > 0) || !(r.high_freq_factor > r.low_freq_factor) ||
            r.original_max_position_embeddings <= 0)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        where + ": rope_scaling needs a positive factor, 0 < low_freq_factor < high_freq_factor and a "
                                "positive original_max_position_embeddings");
    }
    return c;
}

LlamaConfig LlamaConfig::from_file(const std::filesystem::path& path) {
    std::ifstream file(path);
    if (!file) throw sdk::Error(CDZ_STATUS_NOT_FOUND, path.string() + ": cannot open the model config");
    std::ostringstream text;
    text << file.rdbuf();
    return parse(text.str(), path.string());
}

LlamaConfig LlamaConfig::parse(const std::string& text, const std::string& where) {
    nlohmann::json json;
    try {
        json = json_format::parse_strict_json(text, where);
    } catch (const json_format::StrictJsonError& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
    return from_json(json, where);
}

nlohmann::json LlamaConfig::to_json() const {
    nlohmann::json json{
        {"architectures", {attention_bias ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
        {"model_type", attention_bias ? "qwen2" : "llama"},
        {"vocab_size", vocab_size},
        {"hidden_size", hidden_size},
        {"intermediate_size", intermediate_size},
        {"num_hidden_layers", num_hidden_layers},
        {"num_attention_heads", num_attention_heads},
        {"num_key_value_heads", num_key_value_heads},
        {"head_dim", head_dim},
        {"max_position_embeddings", max_position_embeddings},
        {"rms_norm_eps", rms_norm_eps},
        {"rope_theta", rope_theta},
        {"tie_word_embeddings", tie_word_embeddings},
        {"attention_bias", attention_bias},
        {"hidden_act", "silu"},
    };
    if (!rope_scaling.type.empty())
        json["rope_scaling"] = {{"rope_type", rope_scaling.type},
                                {"factor", rope_scaling.factor},
                                {"low_freq_factor", rope_scaling.low_freq_factor},
                                {"high_freq_factor", rope_scaling.high_freq_factor},
                                {"original_max_position_embeddings", rope_scaling.original_max_position_embeddings}};
    return json;
}

void LlamaConfig::save(const std::filesystem::path& path) const {
    std::ofstream file(path);
    if (!file) throw sdk::Error(CDZ_STATUS_IO_ERROR, path.string() + ": cannot write the model config");
    file << to_json().dump(2) << '\n';
}

int64_t LlamaConfig::parameter_count() const {
    const int64_t attention = hidden_size * (query_width() * 2 + key_value_width() * 2) +
                              (attention_bias ? query_width() + 2 * key_value_width() : 0);
    const int64_t mlp = 3 * hidden_size * intermediate_size;
    const int64_t layer = attention + mlp + 2 * hidden_size;
    return vocab_size * hidden_size * (tie_word_embeddings ? 1 : 2) + num_hidden_layers * layer + hidden_size;
}

}  // namespace cadenza::llama
