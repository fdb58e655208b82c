#include "llama_weights.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cstdlib>

#include "cadenza/sdk/plugin_error.hpp"
#include "safetensors.h"

namespace cadenza::llama {
namespace {

std::string layer_prefix(int64_t layer) { return "model.layers." + std::to_string(layer) + "."; }

}  // namespace

std::vector<std::pair<std::string, at::Tensor>> LlamaWeights::named_parameters() const {
    std::vector<std::pair<std::string, at::Tensor>> named;
    named.emplace_back("model.embed_tokens.weight", embed_tokens);
    for (size_t i = 0; i < layers.size(); ++i) {
        const auto& l = layers[i];
        const std::string p = layer_prefix(static_cast<int64_t>(i));
        named.emplace_back(p + "input_layernorm.weight", l.input_norm);
        named.emplace_back(p + "self_attn.q_proj.weight", l.q_proj);
        named.emplace_back(p + "self_attn.k_proj.weight", l.k_proj);
        named.emplace_back(p + "self_attn.v_proj.weight", l.v_proj);
        if (config.attention_bias) {
            named.emplace_back(p + "self_attn.q_proj.bias", l.q_bias);
            named.emplace_back(p + "self_attn.k_proj.bias", l.k_bias);
            named.emplace_back(p + "self_attn.v_proj.bias", l.v_bias);
        }
        named.emplace_back(p + "self_attn.o_proj.weight", l.o_proj);
        named.emplace_back(p + "post_attention_layernorm.weight", l.post_attention_norm);
        named.emplace_back(p + "mlp.gate_proj.weight", l.gate_proj);
        named.emplace_back(p + "mlp.up_proj.weight", l.up_proj);
        named.emplace_back(p + "mlp.down_proj.weight", l.down_proj);
    }
    named.emplace_back("model.norm.weight", norm);
    if (!config.tie_word_embeddings) named.emplace_back("lm_head.weight", lm_head);
    return named;
}

std::vector<at::Tensor> LlamaWeights::parameters() const {
    std::vector<at::Tensor> tensors;
    for (auto& [name, tensor] : named_parameters()) tensors.push_back(tensor);
    return tensors;
}

int64_t LlamaWeights::byte_size() const {
    int64_t bytes = 0;
    for (const auto& tensor : parameters()) bytes += tensor.numel() * static_cast<int64_t>(tensor.element_size());
    return bytes;
}

LlamaWeights LlamaWeights::load(const std::filesystem::path& path, const LlamaConfig& config, const at::Device& device) {
    safetensors::Checkpoint checkpoint = [&] {
        try {
            return safetensors::Checkpoint::open(path);
        } catch (const safetensors::Error& e) {
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
        }
    }();
    auto read = [&](const std::string& name, std::vector<int64_t> shape) {
        try {
            std::vector<float> values = checkpoint.read_f32(name, shape);
            return at::from_blob(values.data(), shape, at::kFloat).clone().to(device);
        } catch (const safetensors::Error& e) {
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
        }
    };
    const int64_t h = config.hidden_size, v = config.vocab_size, i = config.intermediate_size;
    const int64_t q = config.query_width(), kv = config.key_value_width();
    LlamaWeights w;
    w.config = config;
    w.embed_tokens = read("model.embed_tokens.weight", {v, h});
    for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        const std::string p = layer_prefix(layer);
        LayerWeights l;
        l.input_norm = read(p + "input_layernorm.weight", {h});
        l.q_proj = read(p + "self_attn.q_proj.weight", {q, h});
        l.k_proj = read(p + "self_attn.k_proj.weight", {kv, h});
        l.v_proj = read(p + "self_attn.v_proj.weight", {kv, h});
        if (config.attention_bias) {
            l.q_bias = read(p + "self_attn.q_proj.bias", {q});
            l.k_bias = read(p + "self_attn.k_proj.bias", {kv});
            l.v_bias = read(p + "self_attn.v_proj.bias", {kv});
        }
        l.o_proj = read(p + "self_attn.o_proj.weight", {h, q});
        l.post_attention_norm = read(p + "post_attention_layernorm.weight", {h});
        l.gate_proj = read(p + "mlp.gate_proj.weight", {i, h});
        l.up_proj = read(p + "mlp.up_proj.weight", {i, h});
        l.down_proj = read(p + "mlp.down_proj.weight", {h, i});
        w.layers.push_back(std::move(l));
    }
    // A checkpoint with more layers than its config says would run with
    // some of them silently left out.
    for (const auto& name : checkpoint.names()) {
        if (name.rfind("model.layers.", 0) != 0) continue;
        const int64_t layer = std::atoll(name.c_str() + std::string("model.layers.").size());
        if (layer >= config.num_hidden_layers)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, checkpoint.path().string() + ": tensor '" + name +
                                                       "' belongs to layer " + std::to_string(layer) +
                                                       ", but the config has num_hidden_layers = " +
                                                       std::to_string(config.num_hidden_layers));
    }
    w.norm = read("model.norm.weight", {h});
    if (config.tie_word_embeddings) {
        w.lm_head = w.embed_tokens;
    } else if (checkpoint.contains("lm_head.weight")) {
        w.lm_head = read("lm_head.weight", {v, h});
    } else {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, checkpoint.path().string() +
                                                   ": tensor 'lm_head.weight' is missing and the config does not tie it "
                                                   "to the embedding (tie_word_embeddings = false)");
    }
    return w;
}

LlamaWeights LlamaWeights::random(const LlamaConfig& config, uint64_t seed, const at::Device& device) {
    auto generator = at::detail::createCPUGenerator(seed);
    auto normal = [&](std::vector<int64_t> shape) {
        return at::normal(0.0, 0.02, shape, generator, at::TensorOptions().dtype(at::kFloat)).to(device);
    };
    auto ones = [&](int64_t size) { return at::ones({size}, at::TensorOptions().dtype(at::kFloat).device(device)); };
    auto zeros = [&](int64_t size) { return at::zeros({size}, at::TensorOptions().dtype(at::kFloat).device(device)); };
    const int64_t h = config.hidden_size, v = config.vocab_size, i = config.intermediate_size;
    const int64_t q = config.query_width(), kv = config.key_value_width();
    LlamaWeights w;
    w.config = config;
    w.embed_tokens = normal({v, h});
    for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        LayerWeights l;
        l.input_norm = ones(h);
        l.q_proj = normal({q, h});
        l.k_proj = normal({kv, h});
        l.v_proj = normal({kv, h});
        if (config.attention_bias) {
            l.q_bias = zeros(q);
            l.k_bias = zeros(kv);
            l.v_bias = zeros(kv);
        }
        l.o_proj = normal({h, q});
        l.post_attention_norm = ones(h);
        l.gate_proj = normal({i, h});
        l.up_proj = normal({i, h});
        l.down_proj = normal({h, i});
        w.layers.push_back(std::move(l));
    }
    w.norm = ones(h);
    w.lm_head = config.tie_word_embeddings ? w.embed_tokens : normal({v, h});
    return w;
}

void LlamaWeights::save(const std::filesystem::path& path,
                        const std::vector<std::pair<std::string, std::string>>& metadata,
                        const std::vector<std::pair<std::string, at::Tensor>>& extra_tensors) const {
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
    auto tensors = named_parameters();
    tensors.insert(tensors.end(), extra_tensors.begin(), extra_tensors.end());
    for (const auto& [name, tensor] : tensors) {
        const at::Tensor cpu = tensor.detach().to(at::kCPU, at::kFloat).contiguous();
        writer.add_f32(name, std::vector<int64_t>(cpu.sizes().begin(), cpu.sizes().end()), cpu.data_ptr<float>());
    }
    try {
        writer.write(path);
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_IO_ERROR, e.what());
    }
}

}  // namespace cadenza::llama
