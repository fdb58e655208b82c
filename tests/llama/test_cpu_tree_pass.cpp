// The CPU tree pass (plain loops over the cache's rows) against ATen's
// operators on the same model, cache contents and trees: chains, branching
// trees, more nodes than the kernel takes in one group, logits for a suffix
// only, attention biases, and what a commit of one pass leaves for the next.
#include <gtest/gtest.h>

#include <random>
#include <utility>

#include <c10/core/InferenceMode.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "kv_cache.h"
#include "llama_model.h"
#include "tiny_llama.h"

namespace cadenza {
namespace {

using llama::KvCache;
using llama::LlamaModel;
using llama::TreeOutput;

double max_difference(const at::Tensor& a, const at::Tensor& b) { return (a - b).abs().max().item<double>(); }

struct Tree {
    std::vector<int32_t> tokens, parents;
};

// n nodes: each a child of the prefix or of an earlier node, tokens at random.
Tree random_tree(std::mt19937& random, int n, int vocab) {
    Tree tree;
    for (int i = 0; i < n; ++i) {
        tree.tokens.push_back(std::uniform_int_distribution<int>(0, vocab - 1)(random));
        tree.parents.push_back(std::uniform_int_distribution<int>(-1, i - 1)(random));
    }
    return tree;
}

// A chain of n tokens at random (a prompt).
Tree random_chain(std::mt19937& random, int n, int64_t vocab) {
    Tree chain;
    for (int i = 0; i < n; ++i) {
        chain.tokens.push_back(static_cast<int32_t>(random() % vocab));
        chain.parents.push_back(i - 1);
    }
    return chain;
}

// Every node of `tree` in order: committing a whole pass.
std::vector<int64_t> every_node(const Tree& tree) {
    std::vector<int64_t> all(tree.tokens.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    return all;
}

// Evaluates `tree` on two models, each with its own cache (the second
// with `b_scratch` when given), and returns whether both give the same
// hidden states and logits to the bit.
bool same_to_the_bit(const LlamaModel& a, KvCache& a_cache, const LlamaModel& b, KvCache& b_cache, const Tree& tree,
                     int64_t logits_from, llama::TreePassScratch* b_scratch = nullptr) {
    const TreeOutput x = a.forward_tree(a_cache, tree.tokens, tree.parents, logits_from);
    const TreeOutput y = b.forward_tree(b_cache, tree.tokens, tree.parents, logits_from, b_scratch);
    return at::equal(x.hidden, y.hidden) && at::equal(x.logits, y.logits);
}

// Two models on the same weights, one through each pass, each with its own
// cache, fed the same trees and commits.
class BothPasses {
public:
    BothPasses(const llama::LlamaConfig& config, uint64_t seed, bool panels)
        : cpu_(llama::LlamaWeights::random(config, seed, at::kCPU), 256),
          aten_(llama::LlamaWeights::random(config, seed, at::kCPU), 256),
          cpu_cache_(config, 200, at::kCPU),
          aten_cache_(config, 200, at::kCPU) {
        aten_.use_cpu_tree_pass(false);
        if (panels) cpu_.pack_panels();
    }

    bool cpu_pass_runs() const { return cpu_.uses_cpu_tree_pass(); }

    // The largest difference of logits and hidden states between the passes.
    double forward(const Tree& tree, int64_t logits_from = 0) {
        const TreeOutput a = cpu_.forward_tree(cpu_cache_, tree.tokens, tree.parents, logits_from);
        const TreeOutput b = aten_.forward_tree(aten_cache_, tree.tokens, tree.parents, logits_from);
        EXPECT_EQ(a.logits.defined(), b.logits.defined());
        double worst = max_difference(a.hidden, b.hidden);
        if (a.logits.defined()) {
            EXPECT_EQ(a.logits.sizes(), b.logits.sizes());
            worst = std::max(worst, max_difference(a.logits, b.logits));
            EXPECT_GT(b.logits.std().item<double>(), 0.1);  // not a degenerate model
        }
        return worst;
    }

    void commit(const std::vector<int64_t>& path) {
        cpu_cache_.commit(path);
        aten_cache_.commit(path);
    }

    KvCache& cpu_cache() { return cpu_cache_; }
    LlamaModel& cpu_model() { return cpu_; }

private:
    LlamaModel cpu_, aten_;
    KvCache cpu_cache_, aten_cache_;
};

// With panels where a vectorized kernel runs (elsewhere pack_panels does
// nothing and both cases take the matrices' rows).
TEST(CpuTreePass, EqualsTheAtenPassOnChainsTreesAndCommits) {
    c10::InferenceMode inference;
    for (const bool panels : {false, true})
    for (const bool bias : {false, true}) {
        llama::LlamaConfig config = test::tiny_llasa_config();
        config.attention_bias = bias;
        BothPasses passes(config, bias ? 11 : 7, panels);
        if (!passes.cpu_pass_runs()) GTEST_SKIP() << "no small-m kernel on this CPU: forward_tree takes ATen's path";
        SCOPED_TRACE(panels ? "panels" : "rows");
        std::mt19937 random(bias ? 3 : 5);
        // A prompt of 23 tokens as one chain (three groups of the kernel's 8 rows).
        Tree prompt;
        for (int i = 0; i < 23; ++i) {
            prompt.tokens.push_back(static_cast<int32_t>(random() % config.vocab_size));
            prompt.parents.push_back(i - 1);
        }
        EXPECT_LT(passes.forward(prompt), 1e-4);
        std::vector<int64_t> all(prompt.tokens.size());
        for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
        passes.commit(all);
        // Steps: trees of 1 to 12 nodes, logits for all or a suffix, one root-to-leaf path kept.
        for (int step = 0; step < 12; ++step) {
            const int n = 1 + step;
            const Tree tree = random_tree(random, n, static_cast<int>(config.vocab_size));
            EXPECT_LT(passes.forward(tree, step % 3 == 2 ? n / 2 : 0), 1e-4) << "step " << step << ", bias " << bias;
            std::vector<int64_t> path;
            for (int node = n - 1; node >= 0; node = tree.parents[node]) path.insert(path.begin(), node);
            passes.commit(path);
        }
        // No logits at all: hidden states only.
        EXPECT_LT(passes.forward(random_tree(random, 4, static_cast<int>(config.vocab_size)), LlamaModel::no_logits),
                  1e-4);
    }
}

TEST(CpuTreePass, ReadsTheKeyColumnsTheAtenPassWroteAndCommitted) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    LlamaModel cpu(llama::LlamaWeights::random(config, 5, at::kCPU), 256);
    LlamaModel aten(llama::LlamaWeights::random(config, 5, at::kCPU), 256);
    aten.use_cpu_tree_pass(false);
    if (!cpu.uses_cpu_tree_pass()) GTEST_SKIP() << "no small-m kernel on this CPU";
    // `mixed` is filled by ATen's pass, including a commit that moves rows,
    // then read by the CPU pass; `reference` sees ATen's pass only.
    KvCache mixed(config, 100, at::kCPU), reference(config, 100, at::kCPU);
    std::mt19937 random(9);
    const int vocab = static_cast<int>(config.vocab_size);
    for (int step = 0; step < 6; ++step) {
        const Tree tree = random_tree(random, 3 + step, vocab);
        std::vector<int64_t> path;
        for (int node = static_cast<int>(tree.tokens.size()) - 1; node >= 0; node = tree.parents[node])
            path.insert(path.begin(), node);
        const TreeOutput expected = aten.forward_tree(reference, tree.tokens, tree.parents, 0);
        const TreeOutput got = (step < 3 ? aten : cpu).forward_tree(mixed, tree.tokens, tree.parents, 0);
        EXPECT_LT(max_difference(got.logits, expected.logits), 1e-4) << "step " << step;
        reference.commit(path);
        mixed.commit(path);
    }
}

// A prompt long enough to be split between threads (at least 32 nodes a
// part): the outputs and what the cache then holds equal one thread's to the
// bit, with a part boundary inside the query groups and the chain. The split
// model's passes share one scratch, so the step after the prompt also reads
// buffers left larger and stale by it.
TEST(CpuTreePass, APrefillSplitBetweenThreadsEqualsOneThreadToTheBit) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    LlamaModel one(llama::LlamaWeights::random(config, 13, at::kCPU), 256);
    LlamaModel split(llama::LlamaWeights::random(config, 13, at::kCPU), 256);
    one.pack_panels();
    split.pack_panels();
    if (!split.has_panels()) GTEST_SKIP() << "no vectorized panels on this CPU: passes stay on one thread";
    one.set_prefill_threads(1);
    split.set_prefill_threads(3);
    KvCache one_cache(config, 200, at::kCPU), split_cache(config, 200, at::kCPU);
    std::mt19937 random(17);
    const Tree prompt = random_chain(random, 101, config.vocab_size);
    llama::TreePassScratch scratch;
    EXPECT_TRUE(same_to_the_bit(one, one_cache, split, split_cache, prompt, 99, &scratch));
    const std::vector<int64_t> all = every_node(prompt);
    one_cache.commit(all);
    split_cache.commit(all);
    for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        EXPECT_TRUE(at::equal(one_cache.keys(layer), split_cache.keys(layer))) << "layer " << layer;
        EXPECT_TRUE(at::equal(one_cache.values(layer), split_cache.values(layer))) << "layer " << layer;
    }
    // A step after it reads the cache both wrote.
    const Tree step = random_tree(random, 5, static_cast<int>(config.vocab_size));
    EXPECT_TRUE(at::equal(one.forward_tree(one_cache, step.tokens, step.parents, 0).logits,
                          split.forward_tree(split_cache, step.tokens, step.parents, 0, &scratch).logits));
}

// A decoding step or a verification split by columns between the caller
// and helper threads (pass_helpers.h): the outputs and the cache equal one
// thread's to the bit, in float32, float16 and int8 panels and float32 and
// float16 KV caches, with attention biases, for chains and trees of 1 to 12
// nodes, logits for all nodes or a suffix, and commits between passes. Heads of 64, so that a key/value
// head's queries, keys and values are whole panels, and widths that leave
// the last panel of a matrix part-empty.
TEST(CpuTreePass, ASmallPassSplitByColumnsEqualsOneThreadToTheBit) {
    c10::InferenceMode inference;
    llama::LlamaConfig config = test::tiny_llasa_config();
    config.hidden_size = 96;
    config.intermediate_size = 200;
    config.head_dim = 64;
    config.vocab_size = 330;
    using llama::KvPrecision;
    using llama::PanelPrecision;
    const std::pair<PanelPrecision, KvPrecision> storages[] = {{PanelPrecision::float32, KvPrecision::float32},
                                                               {PanelPrecision::float32, KvPrecision::float16},
                                                               {PanelPrecision::float16, KvPrecision::float32},
                                                               {PanelPrecision::float16, KvPrecision::float16},
                                                               {PanelPrecision::int8, KvPrecision::float16}};
    for (const bool bias : {false, true})
        for (const auto& [precision, kv] : storages) {
            config.attention_bias = bias;
            LlamaModel one(llama::LlamaWeights::random(config, 31, at::kCPU), 256);
            LlamaModel split(llama::LlamaWeights::random(config, 31, at::kCPU), 256);
            if (!split.pack_panels(precision)) {
                if (precision == PanelPrecision::int8) continue;  // no int8 kernel
                GTEST_SKIP() << "no vectorized panels on this CPU";
            }
            one.pack_panels(precision);
            split.set_decode_threads(3);
            KvCache one_cache(config, 256, at::kCPU, kv), split_cache(config, 256, at::kCPU, kv);
            std::mt19937 random(37);
            const Tree prompt = random_chain(random, 40, config.vocab_size);
            ASSERT_TRUE(same_to_the_bit(one, one_cache, split, split_cache, prompt, 39));
            one_cache.commit(every_node(prompt));
            split_cache.commit(every_node(prompt));
            for (int step = 0; step < 24; ++step) {
                const int n = 1 + step % 12;
                const Tree tree = step % 2 ? random_chain(random, n, config.vocab_size)
                                           : random_tree(random, n, static_cast<int>(config.vocab_size));
                const int64_t logits_from = step % 3 == 2 ? n - 1 : 0;
                ASSERT_TRUE(same_to_the_bit(one, one_cache, split, split_cache, tree, logits_from))
                    << "step " << step << ", bias " << bias;
                for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
                    ASSERT_TRUE(at::equal(one_cache.keys(layer), split_cache.keys(layer))) << "layer " << layer;
                    ASSERT_TRUE(at::equal(one_cache.values(layer), split_cache.values(layer))) << "layer " << layer;
                }
                std::vector<int64_t> path;  // the last node and its ancestors
                for (int node = n - 1; node >= 0; node = tree.parents[static_cast<size_t>(node)])
                    path.insert(path.begin(), node);
                one_cache.commit(path);
                split_cache.commit(path);
            }
        }
}

// Panels in float16 compute what float32 panels compute on the weights
// rounded to float16, to the bit: the projections and the output head
// rounded, the embedding and the norms as they were.
TEST(CpuTreePass, HalfPanelsEqualFloatPanelsOfTheRoundedWeights) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    auto rounded = [](const at::Tensor& t) { return t.to(at::kHalf).to(at::kFloat).contiguous(); };
    llama::LlamaWeights reference = llama::LlamaWeights::random(config, 21, at::kCPU);
    for (llama::LayerWeights& l : reference.layers)
        for (at::Tensor* m : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
            *m = rounded(*m);
    reference.lm_head = rounded(reference.lm_head);
    LlamaModel full(std::move(reference), 256);
    LlamaModel half(llama::LlamaWeights::random(config, 21, at::kCPU), 256);
    full.pack_panels();
    if (!half.pack_panels(llama::PanelPrecision::float16)) GTEST_SKIP() << "no vectorized panels on this CPU";
    EXPECT_EQ(half.streamed_weight_bytes() * 2, full.streamed_weight_bytes());
    KvCache full_cache(config, 200, at::kCPU), half_cache(config, 200, at::kCPU);
    std::mt19937 random(23);
    const Tree prompt = random_chain(random, 70, config.vocab_size);
    EXPECT_TRUE(same_to_the_bit(full, full_cache, half, half_cache, prompt, 60));
    const std::vector<int64_t> all = every_node(prompt);
    full_cache.commit(all);
    half_cache.commit(all);
    const Tree step = random_tree(random, 7, static_cast<int>(config.vocab_size));
    EXPECT_TRUE(at::equal(full.forward_tree(full_cache, step.tokens, step.parents, 0).logits,
                          half.forward_tree(half_cache, step.tokens, step.parents, 0).logits));
}

// A float16 KV cache holds the float32 cache's keys and values rounded to
// float16 (the first layer's, which read the same inputs, to the bit), and
// a pass over it gives logits within float16's rounding of the float32
// cache's.
TEST(CpuTreePass, AHalfKvCacheHoldsTheRoundedKeysAndValues) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    LlamaModel model(llama::LlamaWeights::random(config, 41, at::kCPU), 256);
    if (!model.pack_panels()) GTEST_SKIP() << "no vectorized panels on this CPU";
    KvCache full_cache(config, 200, at::kCPU), half_cache(config, 200, at::kCPU, llama::KvPrecision::float16);
    EXPECT_TRUE(half_cache.half());
    std::mt19937 random(43);
    const Tree prompt = random_chain(random, 70, config.vocab_size);
    const at::Tensor full = model.forward_tree(full_cache, prompt.tokens, prompt.parents, 0).logits;
    const at::Tensor half = model.forward_tree(half_cache, prompt.tokens, prompt.parents, 0).logits;
    auto rounded = [](const at::Tensor& t) { return t.to(at::kHalf).to(at::kFloat); };
    EXPECT_TRUE(at::equal(half_cache.keys(0), rounded(full_cache.keys(0))));
    EXPECT_TRUE(at::equal(half_cache.values(0), rounded(full_cache.values(0))));
    EXPECT_EQ(half_cache.keys(1).scalar_type(), at::kFloat);
    const double scale = full.abs().max().item<double>();
    EXPECT_LT((full - half).abs().max().item<double>(), 1e-2 * scale);
    EXPECT_GT((full - half).abs().max().item<double>(), 0.0);  // the rounding reached the logits: the half path ran
    const std::vector<int64_t> all = every_node(prompt);
    full_cache.commit(all);
    half_cache.commit(all);
    const Tree step = random_tree(random, 7, static_cast<int>(config.vocab_size));
    const at::Tensor full_step = model.forward_tree(full_cache, step.tokens, step.parents, 0).logits;
    const at::Tensor half_step = model.forward_tree(half_cache, step.tokens, step.parents, 0).logits;
    EXPECT_LT((full_step - half_step).abs().max().item<double>(), 1e-2 * full_step.abs().max().item<double>());
}

// Every committed position's keys sit in the key panels where the layout
// says (kv_cache.h), in float32 and float16 caches alike, after passes and
// commits that move nodes across a panel's edge (positions 62-68).
TEST(CpuTreePass, TheKeyPanelsHoldTheKeyRowsAfterCommitsAcrossAPanelsEdge) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    LlamaModel model(llama::LlamaWeights::random(config, 51, at::kCPU), 256);
    if (!model.pack_panels()) GTEST_SKIP() << "no vectorized panels on this CPU";
    for (const auto precision : {llama::KvPrecision::float32, llama::KvPrecision::float16}) {
        const bool half = precision == llama::KvPrecision::float16;
        SCOPED_TRACE(half ? "float16" : "float32");
        KvCache cache(config, 150, at::kCPU, precision);
        std::mt19937 random(53);
        const Tree prompt = random_chain(random, 62, config.vocab_size);
        model.forward_tree(cache, prompt.tokens, prompt.parents, 0);
        cache.commit(every_node(prompt));
        const std::vector<int32_t> parents{-1, 0, 0, 1, 2, 3, 4};  // two branches
        model.forward_tree(cache, {5, 6, 7, 8, 9, 10, 11}, parents, 0);
        cache.commit({0, 2, 4, 6});  // from positions 62, 64, 66, 68 to 62..65
        model.forward_tree(cache, {12, 13, 14}, {-1, -1, 0}, 0);
        cache.commit({1, 2});
        ASSERT_EQ(cache.length(), 68);
        const int64_t heads = config.num_key_value_heads, dim = config.head_dim;
        const int64_t panel = KvCache::panel_positions;
        for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
            const at::Tensor rows = cache.keys(layer);  // [heads, length, dim], float32
            for (int64_t h = 0; h < heads; ++h)
                for (int64_t p = 0; p < cache.length(); ++p)
                    for (int64_t d = 0; d < dim; ++d) {
                        const int64_t at = h * cache.key_panels_per_head() + ((p / panel) * dim + d) * panel + p % panel;
                        const float in_panel = half ? static_cast<float>(c10::Half(cache.half_key_panels(layer)[at],
                                                                                   c10::Half::from_bits()))
                                                    : cache.key_panels(layer)[at];
                        ASSERT_EQ(in_panel, rows[h][p][d].item<float>())
                            << "layer " << layer << ", head " << h << ", position " << p << ", dimension " << d;
                    }
        }
    }
}

TEST(CpuTreePass, PositionsBeyondTheRotaryTableAreRefused) {
    c10::InferenceMode inference;
    const llama::LlamaConfig config = test::tiny_llasa_config();
    LlamaModel model(llama::LlamaWeights::random(config, 1, at::kCPU), 4);
    if (!model.uses_cpu_tree_pass()) GTEST_SKIP() << "no small-m kernel on this CPU";
    KvCache cache(config, 16, at::kCPU);
    model.forward_tree(cache, {1, 2, 3, 4}, {-1, 0, 1, 2});
    cache.commit({0, 1, 2, 3});
    try {
        model.forward_tree(cache, {5}, {-1});
        FAIL() << "position 4 of a 4-position table was evaluated";
    } catch (const sdk::Error& e) {
        EXPECT_NE(std::string(e.what()).find("rotary table"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace cadenza
