#include "layer_growth.h"

#include <string>

#include "error.h"

namespace cadenza::training {

llama::LlamaWeights with_added_layers(llama::LlamaWeights weights, int64_t count, uint64_t seed) {
    if (count < 1)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--add-layers " + std::to_string(count) + ": must be at least 1");
    llama::LlamaConfig grown = weights.config;
    grown.num_hidden_layers += count;
    const at::Device device = weights.embed_tokens.device();
    llama::LlamaWeights fresh = llama::LlamaWeights::random(grown, seed, device);
    for (int64_t layer = weights.config.num_hidden_layers; layer < grown.num_hidden_layers; ++layer) {
        llama::LayerWeights added = std::move(fresh.layers[static_cast<size_t>(layer)]);
        added.o_proj.zero_();
        added.down_proj.zero_();
        weights.layers.push_back(std::move(added));
    }
    weights.config = grown;
    return weights;
}

}  // namespace cadenza::training
