// LlamaModel::forward_tree on the CPU as plain loops over float32 rows, for
// the few nodes of a decoding step or a verification. ATen's path runs ~35
// operators per layer, each a few microseconds of dispatch, allocation and
// threading whatever the rows: on en-small (6 layers, 256 wide) they cost as
// much as the projections themselves (a one-token pass ~2.0 ms, of which the
// projections' kernel 1.05 ms). Here every projection is one call of the
// small-m kernel on the pass's own buffers, attention is the kernel against
// the cache's key rows plus a softmax and a weighted sum of value rows, and
// norms, rotary positions and SwiGLU are loops. Same arithmetic as the ATen
// path up to the order of float sums.
#pragma once

#include <cstdint>
#include <vector>

#include "kv_cache.h"
#include "llama_weights.h"
#include "rotary_embedding.h"

namespace cadenza::llama {

struct TreeOutput;

// Whether the CPU pass takes these weights: float32 on the CPU, every
// matrix contiguous, and a small-m kernel that runs on this CPU.
bool cpu_tree_pass_applies(const LlamaWeights& weights);

// Evaluates the tree after cache.begin_pass(tokens.size()): node i is token
// tokens[i] at positions[i] (below rotary.max_positions(); checked) and sees
// the committed prefix plus pending node j where visible[i * n + j]. Writes
// the nodes' keys and values into the cache; logits for nodes
// [logits_from, n) only.
TreeOutput cpu_tree_pass(const LlamaWeights& weights, const RotaryEmbedding& rotary, KvCache& cache,
                         const std::vector<int32_t>& tokens, const std::vector<int64_t>& positions,
                         const std::vector<uint8_t>& visible, int64_t logits_from);

}  // namespace cadenza::llama
