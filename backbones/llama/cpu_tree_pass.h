// LlamaModel::forward_tree on the CPU as plain loops over float32 rows, for
// the few nodes of a decoding step or a verification. ATen's path runs ~35
// operators per layer, each a few microseconds of dispatch, allocation and
// threading whatever the rows: on en-small (6 layers, 256 wide) they cost as
// much as the projections themselves (a one-token pass ~2.0 ms, of which the
// projections' kernel 1.05 ms). Here every projection is one call of the
// small-m kernel (or of the panel kernel) on the pass's own buffers,
// attention is the queries' scores against the cache's keys, a softmax and
// a weighted sum of value rows, and norms, rotary positions and SwiGLU are
// loops. Same arithmetic as the ATen path up to the order of float sums.
#pragma once

#include <cstdint>
#include <vector>

#include "kv_cache.h"
#include "llama_weights.h"
#include "panel_weights.h"
#include "pass_helpers.h"
#include "rotary_embedding.h"
#include "tree_pass_scratch.h"

namespace cadenza::llama {

struct TreeOutput;

// Whether the CPU pass takes these weights: float32 on the CPU, every
// matrix contiguous, and a small-m kernel that runs on this CPU.
bool cpu_tree_pass_applies(const LlamaWeights& weights);

// Evaluates the tree after cache.begin_pass(tokens.size()): node i is token
// tokens[i] at positions[i] (below rotary.max_positions(); checked) and sees
// the committed prefix plus pending node j where visible[i * n + j]. Writes
// the nodes' keys and values into the cache; logits for nodes
// [logits_from, n) only. With `panels` (the same matrices as panels) the
// projections and the logits are combinations of panels; without, the
// small-m matmul kernel's dot products with the matrices' rows. With the
// panels and `threads` > 1, a pass of at least 64 nodes (a prompt's
// prefill: compute, not the weights' bandwidth, bounds it) splits its nodes
// between up to `threads` threads (parallel_parts.h); the result is the same
// to the bit. A smaller pass with the panels and `helpers` (pass_helpers.h)
// splits every matrix's columns between the calling thread and the helpers
// instead (when a key/value head's queries, keys and values are whole
// panels; else one thread), the same to the bit as well. The rows live in
// `scratch`.
TreeOutput cpu_tree_pass(const LlamaWeights& weights, const PanelWeights* panels, const RotaryEmbedding& rotary,
                         KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& positions,
                         const std::vector<uint8_t>& visible, int64_t logits_from, int threads, PassHelpers* helpers,
                         TreePassScratch& scratch);

}  // namespace cadenza::llama
