// A LLaMA-architecture transformer: RMSNorm, rotary positions, grouped-query
// attention, SwiGLU MLP, tied or untied output head. Two ways through it:
// a token tree against a KV cache (inference: tree attention, positions from
// depth) and whole sequences with a causal mask (training, autograd).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "kv_cache.h"
#include "llama_weights.h"
#include "panel_weights.h"
#include "pass_helpers.h"
#include "rotary_embedding.h"
#include "tree_pass_scratch.h"

namespace cadenza::llama {

// Asks a sequence forward pass to keep one head's attention weights of some
// layers (training: a guided-attention loss reads them; differentiable).
struct AttentionProbe {
    std::vector<int64_t> layers;  // layer indices, ascending
    int64_t head = 0;
    std::vector<at::Tensor> weights;  // filled: per listed layer, [batch, time, time]
};

struct TreeOutput {
    at::Tensor logits;  // [nodes, vocab], or undefined when not asked for
    at::Tensor hidden;  // [nodes, hidden] after the final norm
};

class LlamaModel {
public:
    // `max_positions` bounds the rotary table (and so sequence lengths).
    LlamaModel(LlamaWeights weights, int64_t max_positions);

    const LlamaConfig& config() const { return weights_.config; }
    const LlamaWeights& weights() const { return weights_; }
    // For changing the weights (training): drops the panels, which would not follow.
    LlamaWeights& mutable_weights() {
        panels_.reset();
        return weights_;
    }
    at::Device device() const { return weights_.embed_tokens.device(); }

    // Evaluates a token tree after the cache's committed prefix: node i
    // (parents[i] < i, -1 for a child of the prefix) sits at position
    // length + depth(i) and attends to the prefix and its own ancestors.
    // Its keys and values stay pending in the cache until commit. Logits
    // are computed for nodes [logits_from, n) only (none for no_logits).
    // A caller that makes many passes keeps a `scratch` for them (without:
    // each pass allocates its own).
    static constexpr int64_t no_logits = std::numeric_limits<int64_t>::max();
    TreeOutput forward_tree(KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents,
                            int64_t logits_from = 0, TreePassScratch* scratch = nullptr) const;

    // Hidden states after the final norm for token sequences [batch, time]
    // (positions 0..time-1, causal); differentiable.
    at::Tensor forward_sequence(const at::Tensor& tokens, AttentionProbe* probe = nullptr) const;
    // Hidden states [..., hidden] to logits [..., vocab].
    at::Tensor logits(const at::Tensor& hidden) const;

    // Whether forward_tree takes cpu_tree_pass.h's plain loops where they
    // apply (float32 weights on a CPU with a small-m kernel; the default
    // unless the environment says CADENZA_TREE_PASS=aten) or ATen's
    // operators (any device; tests compare the two).
    void use_cpu_tree_pass(bool enabled) { cpu_tree_pass_ = enabled; }
    bool uses_cpu_tree_pass() const;
    // Makes the CPU pass's projections combinations of panels (panel_weights.h)
    // where a vectorized row-combination kernel runs, at the cost of a second
    // copy of the matrices; no-op elsewhere. For inference, once the weights
    // are final: mutable_weights() drops the panels, but a change made in
    // place through the tensors (an optimizer's step) would not be seen.
    // With PanelPrecision::float16 the panels hold each weight rounded to the
    // nearest float16 (half the bytes a pass streams).
    // Returns whether the panels hold `precision` (false: no panels here).
    bool pack_panels(PanelPrecision precision = PanelPrecision::float32);
    bool has_panels() const { return panels_ != nullptr; }
    // Logits [rows, vocab] of final hidden states (after the norm) [rows,
    // hidden] through the panels' output head, in the panels' precision;
    // false (and nothing written) without panels.
    bool panel_logits(const float* hidden, int64_t rows, float* out) const;
    // The parameters' size at the precision a pass reads them: halved when
    // the panels are float16 (the norms and the embedding rows, which stay
    // float32, are a small share).
    int64_t streamed_weight_bytes() const;
    // Threads a long pass of the CPU pass (a prompt's prefill) may split its
    // nodes between (cpu_tree_pass.h), 0: one per core; 1 until set.
    void set_prefill_threads(int threads);
    // Threads a smaller pass (a decoding step, a verification) splits its
    // matrices' columns between (cpu_tree_pass.h), 0: one per core, and at
    // most one per core; 1 until set. Besides the caller's, they are threads kept for the model's life
    // (pass_helpers.h), which spin briefly between passes, then sleep. The
    // same result to the bit whatever the number.
    void set_decode_threads(int threads);

    // The transformer layers on their own, for models built from a subset
    // of another's layers: input and output [batch, time, hidden].
    at::Tensor run_layers(const at::Tensor& hidden, AttentionProbe* probe = nullptr) const;

private:
    at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const;

    LlamaWeights weights_;
    RotaryEmbedding rotary_;
    bool cpu_tree_pass_;
    int prefill_threads_ = 1;
    std::unique_ptr<PassHelpers> pass_helpers_;  // none: one thread
    std::unique_ptr<const PanelWeights> panels_;
};

}  // namespace cadenza::llama
