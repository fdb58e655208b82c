#include "llama_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "cadenza/sdk/plugin_error.hpp"
#include "cpu_tree_pass.h"
#include "int8_panels.h"
#include "row_combinations.h"
#include "huge_pages.h"
#include "projection.h"

namespace cadenza::llama {
namespace {

bool environment_asks_for_aten_pass() {
    const char* pass = std::getenv("CADENZA_TREE_PASS");
    return pass && std::strcmp(pass, "aten") == 0;
}

}  // namespace

LlamaModel::LlamaModel(LlamaWeights weights, int64_t max_positions)
    : weights_(std::move(weights)),
      rotary_(weights_.config, max_positions, weights_.embed_tokens.device()),
      cpu_tree_pass_(!environment_asks_for_aten_pass()) {
    // Every forward pass streams all the weights: 2 MiB pages spare it most TLB misses.
    request_huge_pages(weights_.parameters());
}

void LlamaModel::set_prefill_threads(int threads) {
    prefill_threads_ = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void LlamaModel::set_decode_threads(int threads) {
    // More threads than cores would only take turns at the shares: at most one per core.
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int wanted = threads > 0 ? std::min(threads, cores) : cores;
    if (wanted == (pass_helpers_ ? pass_helpers_->parts() : 1)) return;
    pass_helpers_.reset();
    if (wanted > 1) pass_helpers_ = std::make_unique<PassHelpers>(wanted - 1);
}

bool LlamaModel::uses_cpu_tree_pass() const { return cpu_tree_pass_ && cpu_tree_pass_applies(weights_); }

bool LlamaModel::pack_panels(PanelPrecision precision) {
    if (!uses_cpu_tree_pass() || !combine_rows_vectorized()) return false;
    if (precision == PanelPrecision::int8 && !int8_panels_supported()) return false;
    panels_ = std::make_unique<PanelWeights>(PanelWeights::pack(weights_, precision));
    return true;
}

bool LlamaModel::panel_logits(const float* hidden, int64_t rows, float* out) const {
    if (!panels_) return false;
    combine_panels(hidden, rows, config().hidden_size, panels_->lm_head, nullptr, out, config().vocab_size);
    return true;
}

int64_t LlamaModel::streamed_weight_bytes() const {
    if (panels_ && panels_->arena.scalar_type() == at::kChar) return weights_.byte_size() / 4;
    const bool half = panels_ && panels_->arena.scalar_type() == at::kHalf;
    return half ? weights_.byte_size() / 2 : weights_.byte_size();
}

at::Tensor LlamaModel::rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
    const at::Tensor variance = x.pow(2).mean(-1, /*keepdim=*/true);
    return x * at::rsqrt(variance + config().rms_norm_eps) * weight;
}

TreeOutput LlamaModel::forward_tree(KvCache& cache, const std::vector<int32_t>& tokens,
                                    const std::vector<int32_t>& parents, int64_t logits_from,
                                    TreePassScratch* scratch) const {
    const LlamaConfig& c = config();
    const auto n = static_cast<int64_t>(tokens.size());
    if (n == 0 || parents.size() != tokens.size())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "a tree needs as many parents as tokens, and at least one node");
    const int64_t prefix = cache.length();
    TreePassScratch own;
    TreePassScratch& rows = scratch ? *scratch : own;

    // Positions from depth, and which pending nodes each node may see.
    std::vector<int64_t>& positions = rows.positions;
    std::vector<uint8_t>& visible = rows.visible;
    positions.resize(static_cast<size_t>(n));
    visible.assign(static_cast<size_t>(n * n), 0);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t parent = parents[i];
        if (parent < -1 || parent >= i)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "tree node " + std::to_string(i) + " has parent " +
                                                         std::to_string(parent) + " (parents must precede children)");
        if (tokens[i] < 0 || tokens[i] >= c.vocab_size)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "token " + std::to_string(tokens[i]) + " is outside the vocabulary");
        positions[i] = parent < 0 ? prefix : positions[parent] + 1;
        if (parent >= 0) std::copy_n(&visible[parent * n], n, &visible[i * n]);
        visible[i * n + i] = 1;
    }
    cache.begin_pass(n);
    if (uses_cpu_tree_pass())
        return cpu_tree_pass(weights_, panels_.get(), rotary_, cache, tokens, positions, visible, logits_from,
                             prefill_threads_, pass_helpers_.get(), rows);
    // Verification batches are not padded to a favourable size: with the
    // small-m kernel (projection.cpp) a pass costs more with every node, as
    // sgemm did not (150M model, ms for m = 3..8: 23.5 25.0 25.4 26.0 25.9 26.3;
    // with sgemm m = 3 and 7 cost more than 4 and 8), so padding only adds work.

    const at::Device device = this->device();
    const auto long_options = at::TensorOptions().dtype(at::kLong);
    const at::Tensor token_ids = at::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), long_options).to(device);
    const at::Tensor position_ids = at::tensor(positions, long_options).to(device);
    // The prefix is visible to all, pending nodes only to their descendants:
    // an additive mask [n, n] over the pending columns alone (none for one
    // node), added in place to each layer's scores.
    at::Tensor pending_mask;
    if (n > 1) {
        std::vector<float> values(static_cast<size_t>(n * n), 0.0f);
        for (int64_t i = 0; i < n * n; ++i)
            if (!visible[i]) values[i] = -std::numeric_limits<float>::infinity();
        pending_mask = at::from_blob(values.data(), {n, n}, at::kFloat).to(device, /*non_blocking=*/false, /*copy=*/true);
    }
    // Rotary cos and sin rows of the positions, gathered once for all layers.
    const auto angles = rotary_.angles(position_ids);

    const int64_t heads = c.num_attention_heads, kv_heads = c.num_key_value_heads, d = c.head_dim;
    const int64_t group = heads / kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    at::Tensor x = weights_.embed_tokens.index_select(0, token_ids);  // [n, H]
    for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
        const LayerWeights& w = weights_.layers[layer];
        const at::Tensor h = rms_norm(x, w.input_norm);
        at::Tensor q = project(h, w.q_proj, w.q_bias).view({n, heads, d});
        at::Tensor k = project(h, w.k_proj, w.k_bias).view({n, kv_heads, d});
        const at::Tensor v = project(h, w.v_proj, w.v_bias).view({n, kv_heads, d});
        q = rotary_.apply(q, angles);
        k = rotary_.apply(k, angles);
        cache.write(layer, k, v);
        const at::Tensor keys = cache.keys(layer);      // [kv_heads, L, d]
        const at::Tensor values = cache.values(layer);  // [kv_heads, L, d]
        // Queries grouped by their key/value head: [kv_heads, group * n, d].
        const at::Tensor grouped = q.view({n, kv_heads, group, d}).permute({1, 2, 0, 3}).reshape({kv_heads, group * n, d});
        at::Tensor scores = at::bmm(grouped, keys.transpose(1, 2)).mul_(scale);  // [kv_heads, group * n, L]
        if (pending_mask.defined()) scores.view({kv_heads, group, n, prefix + n}).narrow(-1, prefix, n).add_(pending_mask);
        const at::Tensor weights = at::softmax(scores, -1);  // [kv_heads, group * n, L]
        const at::Tensor attended = at::bmm(weights, values)  // [kv_heads, group * n, d]
                                        .view({kv_heads, group, n, d})
                                        .permute({2, 0, 1, 3})
                                        .reshape({n, heads * d});
        x = x + project(attended, w.o_proj);
        const at::Tensor g = rms_norm(x, w.post_attention_norm);
        x = x + project(at::silu(project(g, w.gate_proj)) * project(g, w.up_proj), w.down_proj);
    }
    TreeOutput out;
    out.hidden = rms_norm(x, weights_.norm);
    if (logits_from < n)
        out.logits = project(logits_from > 0 ? out.hidden.narrow(0, logits_from, n - logits_from) : out.hidden,
                             weights_.lm_head);
    return out;
}

at::Tensor LlamaModel::run_layers(const at::Tensor& input, AttentionProbe* probe) const {
    const LlamaConfig& c = config();
    const int64_t batch = input.size(0), time = input.size(1);
    const int64_t heads = c.num_attention_heads, kv_heads = c.num_key_value_heads, d = c.head_dim;
    const int64_t group = heads / kv_heads;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const at::Tensor causal =
        at::full({time, time}, -std::numeric_limits<float>::infinity(), input.options()).triu(1);
    if (probe) {
        probe->weights.clear();
        for (const int64_t layer : probe->layers)
            if (layer < 0 || layer >= c.num_hidden_layers || probe->head < 0 || probe->head >= heads)
                throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "attention probe of layer " + std::to_string(layer) + " head " +
                                                             std::to_string(probe->head) + " is outside the model");
    }
    at::Tensor x = input;
    for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
        const LayerWeights& w = weights_.layers[layer];
        const at::Tensor h = rms_norm(x, w.input_norm);
        at::Tensor q = at::linear(h, w.q_proj, w.q_bias).view({batch, time, heads, d});
        at::Tensor k = at::linear(h, w.k_proj, w.k_bias).view({batch, time, kv_heads, d});
        at::Tensor v = at::linear(h, w.v_proj, w.v_bias).view({batch, time, kv_heads, d});
        q = rotary_.apply_sequence(q).transpose(1, 2);  // [B, heads, T, d]
        k = rotary_.apply_sequence(k).transpose(1, 2);  // [B, kv_heads, T, d]
        v = v.transpose(1, 2);
        if (group > 1) {
            k = k.repeat_interleave(group, 1);
            v = v.repeat_interleave(group, 1);
        }
        const at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) * scale + causal;
        const at::Tensor attention = at::softmax(scores, -1);
        if (probe && std::find(probe->layers.begin(), probe->layers.end(), layer) != probe->layers.end())
            probe->weights.push_back(attention.select(1, probe->head));
        const at::Tensor attended = at::matmul(attention, v).transpose(1, 2).reshape({batch, time, heads * d});
        x = x + at::linear(attended, w.o_proj);
        const at::Tensor g = rms_norm(x, w.post_attention_norm);
        x = x + at::linear(at::silu(at::linear(g, w.gate_proj)) * at::linear(g, w.up_proj), w.down_proj);
    }
    return x;
}

at::Tensor LlamaModel::forward_sequence(const at::Tensor& tokens, AttentionProbe* probe) const {
    if (tokens.dim() != 2) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "tokens must be [batch, time]");
    const at::Tensor x = at::embedding(weights_.embed_tokens, tokens);
    return rms_norm(run_layers(x, probe), weights_.norm);
}

at::Tensor LlamaModel::logits(const at::Tensor& hidden) const { return at::linear(hidden, weights_.lm_head); }

}  // namespace cadenza::llama
