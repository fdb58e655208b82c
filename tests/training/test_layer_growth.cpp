// Deepening a trained target: the grown model computes what the trained one
// did, and its new layers are trainable (their gradients are not all zero).
#include <gtest/gtest.h>

#include "error.h"
#include "layer_growth.h"
#include "llama_model.h"
#include "tiny_training.h"

namespace cadenza::training {
namespace {

TEST(LayerGrowth, AddedLayersStartAsIdentityAndLearn) {
    const llama::LlamaConfig config = tiny_config(2);
    llama::LlamaWeights trained = llama::LlamaWeights::random(config, 7, at::kCPU);
    const at::Tensor tokens = at::arange(20, at::kLong).remainder(config.vocab_size).unsqueeze(0);
    llama::LlamaModel original(trained, config.max_position_embeddings);
    const at::Tensor expected = original.logits(original.forward_sequence(tokens));

    llama::LlamaWeights grown = with_added_layers(trained, 3, 11);
    ASSERT_EQ(grown.config.num_hidden_layers, 5);
    ASSERT_EQ(grown.layers.size(), 5u);
    EXPECT_TRUE(grown.layers[4].o_proj.eq(0).all().item<bool>());
    EXPECT_FALSE(grown.layers[4].q_proj.eq(0).all().item<bool>());
    for (const auto& [name, tensor] : grown.named_parameters()) tensor.requires_grad_(true);
    llama::LlamaModel deeper(grown, config.max_position_embeddings);
    const at::Tensor logits = deeper.logits(deeper.forward_sequence(tokens));
    EXPECT_TRUE(at::allclose(logits, expected, 1e-5, 1e-5));

    logits.logsumexp(-1).sum().backward();
    EXPECT_GT(grown.layers[4].o_proj.grad().abs().sum().item<double>(), 0);
    EXPECT_GT(grown.layers[2].down_proj.grad().abs().sum().item<double>(), 0);
}

TEST(LayerGrowth, RefusesNoLayers) {
    EXPECT_THROW(with_added_layers(llama::LlamaWeights::random(tiny_config(2), 7, at::kCPU), 0, 1), Error);
}

}  // namespace
}  // namespace cadenza::training
