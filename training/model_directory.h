// A Hugging Face model directory as the training tools write and read it:
// config.json (LlamaConfig) and model.safetensors (LlamaWeights, with
// cadenza.* metadata).
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "llama_weights.h"

namespace cadenza::training {

// Writes both files, each through a temporary file and a rename;
// `extra_tensors` go into model.safetensors beside the model's.
void save_model_directory(const std::filesystem::path& directory, const llama::LlamaWeights& weights,
                          const std::vector<std::pair<std::string, std::string>>& metadata,
                          const std::vector<std::pair<std::string, at::Tensor>>& extra_tensors = {});

// Reads config.json and the weights of `directory` (float32, CPU).
llama::LlamaWeights load_model_directory(const std::filesystem::path& directory);

}  // namespace cadenza::training
