// The parameters of a LLaMA model as LibTorch tensors (float32, on one
// device), loaded from or saved to safetensors with Hugging Face names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "llama_config.h"

namespace cadenza::llama {

struct LayerWeights {
    at::Tensor input_norm;                     // [H]
    at::Tensor q_proj, k_proj, v_proj, o_proj;  // [Hq*D, H], [Hkv*D, H], [Hkv*D, H], [H, Hq*D]
    at::Tensor q_bias, k_bias, v_bias;          // attention_bias only
    at::Tensor post_attention_norm;             // [H]
    at::Tensor gate_proj, up_proj, down_proj;   // [I, H], [I, H], [H, I]
};

struct LlamaWeights {
    LlamaConfig config;
    at::Tensor embed_tokens;  // [V, H]
    std::vector<LayerWeights> layers;
    at::Tensor norm;          // [H]
    at::Tensor lm_head;       // [V, H]; the embedding itself when tied

    // Reads every tensor by its Hugging Face name from a safetensors file, an
    // index .json or a directory, checking each shape against the config.
    // f32, f16 and bf16 are converted to float32. Throws cadenza::sdk::Error
    // naming the checkpoint and the tensor.
    static LlamaWeights load(const std::filesystem::path& checkpoint, const LlamaConfig& config,
                             const at::Device& device);
    // Fresh weights for training from scratch: normal(0, 0.02) projections,
    // unit norms, from `seed`.
    static LlamaWeights random(const LlamaConfig& config, uint64_t seed, const at::Device& device);

    // Writes every tensor with its Hugging Face name (float32) plus
    // `metadata` into one safetensors file.
    // `extra_tensors` (float32) are written beside the model's own.
    void save(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::string>>& metadata = {},
              const std::vector<std::pair<std::string, at::Tensor>>& extra_tensors = {}) const;

    // Every parameter, for an optimizer (the tied head counted once).
    std::vector<at::Tensor> parameters() const;
    // The named parameters, Hugging Face names, in a fixed order.
    std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;

    int64_t byte_size() const;  // bytes of every parameter
};

}  // namespace cadenza::llama
