#include "tiny_llama.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "safetensors.h"

namespace cadenza::test {

llama::LlamaConfig tiny_llasa_config() {
    llama::LlamaConfig c;
    c.vocab_size = 320;
    c.hidden_size = 64;
    c.intermediate_size = 128;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 16;
    c.max_position_embeddings = 512;
    c.rms_norm_eps = 1e-5;
    c.rope_theta = 500000.0;
    c.rope_scaling.type = "llama3";
    c.rope_scaling.factor = 32.0;
    c.rope_scaling.low_freq_factor = 1.0;
    c.rope_scaling.high_freq_factor = 4.0;
    c.rope_scaling.original_max_position_embeddings = 64;
    c.tie_word_embeddings = true;
    return c;
}

llama::LlamaWeights write_tiny_checkpoint(const std::filesystem::path& directory, uint64_t seed, StoredAs stored,
                                          int shards, const llama::LlamaConfig& config) {
    std::filesystem::create_directories(directory);
    config.save(directory / "config.json");
    llama::LlamaWeights weights = llama::LlamaWeights::random(config, seed, at::kCPU);
    // Larger than training's 0.02 so that the logits are far from uniform.
    for (auto& [name, tensor] : weights.named_parameters())
        if (tensor.dim() == 2) tensor.mul_(10.0);

    std::vector<safetensors::Writer> writers(static_cast<size_t>(shards));
    nlohmann::json weight_map;
    const auto named = weights.named_parameters();
    for (size_t i = 0; i < named.size(); ++i) {
        const auto& [name, tensor] = named[i];
        const at::Tensor values = tensor.contiguous();
        const std::vector<int64_t> shape(values.sizes().begin(), values.sizes().end());
        const size_t shard = shards == 1 ? 0 : (i < named.size() / 2 ? 0 : 1);
        auto& writer = writers[shard];
        switch (stored) {
            case StoredAs::f32: writer.add_f32(name, shape, values.data_ptr<float>()); break;
            case StoredAs::f16: writer.add_f16(name, shape, values.data_ptr<float>()); break;
            case StoredAs::bf16: writer.add_bf16(name, shape, values.data_ptr<float>()); break;
        }
        weight_map[name] = shards == 1 ? "model.safetensors" : "model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors";
    }
    if (shards == 1) {
        writers[0].write(directory / "model.safetensors");
    } else {
        for (int s = 0; s < shards; ++s)
            writers[s].write(directory / ("model-0000" + std::to_string(s + 1) + "-of-00002.safetensors"));
        std::ofstream(directory / "model.safetensors.index.json") << nlohmann::json{{"metadata", {{"total_size", 0}}},
                                                                                    {"weight_map", weight_map}}
                                                                         .dump(2);
    }
    // What the file holds, after rounding.
    return llama::LlamaWeights::load(directory, config, at::kCPU);
}

std::string tiny_backbone_table(const std::filesystem::path& directory) {
    return "plugin = \"backbone.llama\"\ncheckpoint = \"" + directory.string() +
           "\"\ntext_token_count = 256\naudio_start_token = 256\nend_token = 257\n"
           "audio_token_offset = 258\naudio_token_count = 62\n";
}

}  // namespace cadenza::test
