// Tiny LLaMA checkpoints for tests: LLaSA-1B's tensor names and layout
// (Llama-3.2: grouped-query attention, tied embedding, llama3 rotary
// scaling), scaled down to a few hundred thousand parameters.
#pragma once

#include <filesystem>
#include <string>

#include "llama_config.h"
#include "llama_weights.h"

namespace cadenza::test {

// vocab 320: text 0..255, audio start 256, end 257, 62 audio codes from 258.
llama::LlamaConfig tiny_llasa_config();

enum class StoredAs { f32, f16, bf16 };

// Writes config.json and model.safetensors into `directory` (or two shards
// and model.safetensors.index.json when `shards` is 2) and returns the
// weights as written (after rounding to the stored type).
llama::LlamaWeights write_tiny_checkpoint(const std::filesystem::path& directory, uint64_t seed,
                                          StoredAs stored = StoredAs::f32, int shards = 1,
                                          const llama::LlamaConfig& config = tiny_llasa_config());

// The [backbone] table for such a checkpoint.
std::string tiny_backbone_table(const std::filesystem::path& directory);

}  // namespace cadenza::test
