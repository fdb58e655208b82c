#include "cpu_tree_pass.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "llama_model.h"
#include "parallel_parts.h"
#include "pass_helpers.h"
#include "probability_row.h"
#include "row_combinations.h"
#include "small_matmul.h"

namespace cadenza::llama {
namespace {

void rms_norm_rows(const float* x, int64_t rows, int64_t size, const float* weight, double eps, float* out) {
    for (int64_t r = 0; r < rows; ++r, x += size, out += size) {
        double squares = 0.0;
        for (int64_t i = 0; i < size; ++i) squares += static_cast<double>(x[i]) * x[i];
        const auto scale = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(size) + eps));
        for (int64_t i = 0; i < size; ++i) out[i] = x[i] * scale * weight[i];
    }
}

// Rotates each `dim`-wide head of `row` by the table rows cos and sin
// (rotate_half: the head's two halves turn together).
void rotate_heads(float* row, int64_t heads, int64_t dim, const float* cos, const float* sin) {
    const int64_t half = dim / 2;
    for (int64_t h = 0; h < heads; ++h, row += dim)
        for (int64_t i = 0; i < half; ++i) {
            const float a = row[i], b = row[i + half];
            row[i] = a * cos[i] - b * sin[i];
            row[i + half] = b * cos[i + half] + a * sin[i + half];
        }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void swiglu(const float* gate, const float* up, int64_t count, float* out) {
    exponentiate_row(gate, out, count, 0.0f, -1.0f);  // exp(-gate)
    for (int64_t i = 0; i < count; ++i) out[i] = gate[i] / (1.0f + out[i]) * up[i];
}

// What the attention of a pass reads besides the rows.
struct AttentionShape {
    int64_t n, prefix, seen, capacity, dim, group, qw;
    float scale;
    const std::vector<uint8_t>& visible;  // [n, n]: which pending nodes each node sees
    bool by_combination;  // scores as combinations of the key panels (else the small-m kernel, all n nodes at once)
    MatmulKernel kernel;
};

// Key/value head h's group of query heads for the nodes [begin, end): their
// scores against the cache's prefix and the pending nodes each may see, the
// softmax, and the weighted value rows into those heads' columns of
// `attended` [n, qw]. `grouped` [group * n * dim] and `scores` [group * n *
// seen] are working rows: row (j, i) is query head h * group + j of node i.
// combine_rows over a cache's value rows, float32 or float16 alike.
struct CacheRows {
    const float* full = nullptr;
    const uint16_t* half = nullptr;

    void combine(const float* a, int64_t rows, int64_t a_stride, int64_t count, int64_t b_stride, int64_t width,
                 float* out, int64_t out_stride) const {
        if (half)
            combine_half_rows(a, rows, a_stride, half, count, b_stride, width, out, out_stride);
        else
            combine_rows(a, rows, a_stride, full, count, b_stride, width, out, out_stride);
    }
};

void attend_group(const AttentionShape& a, const KvCache& cache, int64_t layer, int64_t h, int64_t begin,
                  int64_t end, const float* q, float* grouped, float* scores, float* attended) {
    const int64_t n = a.n, seen = a.seen, dim = a.dim, group = a.group, rows = end - begin;
    const float negative_infinity = -std::numeric_limits<float>::infinity();
    const int64_t head_block = h * a.capacity * dim;
    const CacheRows values = cache.half() ? CacheRows{nullptr, cache.half_value_rows(layer) + head_block}
                                          : CacheRows{cache.value_rows(layer) + head_block, nullptr};
    const int64_t panel_block = h * cache.key_panels_per_head();
    // Scores [rows, seen] of the query rows x [rows, dim] against the head's key panels.
    auto score = [&](const float* x, int64_t rows_of_x, float* out) {
        if (cache.half())
            combine_half_panels(x, rows_of_x, dim, cache.half_key_panels(layer) + panel_block, dim, seen, nullptr, out,
                                seen);
        else
            combine_panels(x, rows_of_x, dim, cache.key_panels(layer) + panel_block, dim, seen, nullptr, out, seen);
    };
    if (cache.half() && !a.by_combination)
        throw sdk::Error(CDZ_STATUS_INTERNAL, "a float16 KV cache needs the vectorized attention");
    for (int64_t j = 0; j < group; ++j)
        for (int64_t i = begin; i < end; ++i)
            std::memcpy(&grouped[(j * n + i) * dim], &q[i * a.qw + (h * group + j) * dim], sizeof(float) * dim);
    // With every node of the pass, the group's rows are contiguous: one
    // sweep over the head's keys (and below its values) serves all of them
    // instead of one per query head. combine_rows sums each row alone, so
    // the bits are the same either way.
    const bool whole_group = rows == n;
    if (a.by_combination && whole_group)
        score(grouped, group * n, scores);
    else if (a.by_combination)
        for (int64_t j = 0; j < group; ++j)
            score(&grouped[(j * n + begin) * dim], rows, &scores[(j * n + begin) * seen]);
    else  // one part: every row of the group at once
        small_matmul_rows(a.kernel, grouped, group * n, dim, cache.key_rows(layer) + head_block, seen, dim, nullptr,
                          scores, seen, /*split=*/false);
    for (int64_t j = 0; j < group; ++j)
        for (int64_t i = begin; i < end; ++i) {
            float* row = &scores[(j * n + i) * seen];
            for (int64_t t = 0; t < n; ++t)
                if (!a.visible[i * n + t]) row[a.prefix + t] = negative_infinity;
            // The node sees itself, so the maximum is finite.
            exponentiate_row(row, row, seen, row_max(row, seen), a.scale);
            const auto inverse_total = static_cast<float>(1.0 / row_sum(row, seen));
            for (int64_t t = 0; t < seen; ++t) row[t] *= inverse_total;
        }
    // Query head h * group + j of the nodes: node i's output at attended row i.
    float* first_head = &attended[begin * a.qw + h * group * dim];
    if (whole_group && n == 1) {  // the heads' outputs lie side by side
        values.combine(scores, group, seen, seen, dim, dim, first_head, dim);
    } else if (whole_group) {  // into `grouped` (the queries are spent), then to each head's columns
        values.combine(scores, group * n, seen, seen, dim, dim, grouped, dim);
        for (int64_t j = 0; j < group; ++j)
            for (int64_t i = 0; i < n; ++i)
                std::memcpy(&first_head[i * a.qw + j * dim], &grouped[(j * n + i) * dim], sizeof(float) * dim);
    } else {
        for (int64_t j = 0; j < group; ++j)
            values.combine(&scores[(j * n + begin) * seen], rows, seen, seen, dim, dim, &first_head[j * dim], a.qw);
    }
}

// Below this many rows a part's projections stream the weights rather than
// compute on them, and a second thread would only share the bandwidth.
constexpr int64_t min_rows_per_part = 32;

// A matrix's output columns cut into shares of whole panels, about
// `wanted` of them (StagedShares: more shares than parts even out the parts'
// speeds at a claim each).
struct ColumnShares {
    int64_t out, per_share;
    int count;

    ColumnShares(int64_t out_columns, int wanted) : out(out_columns) {
        const int64_t panels = (out + PanelMatrix::width - 1) / PanelMatrix::width;
        per_share = std::max<int64_t>(1, (panels + wanted - 1) / wanted) * PanelMatrix::width;
        count = static_cast<int>((out + per_share - 1) / per_share);
    }
    int64_t first(int share) const { return share * per_share; }
    int64_t width(int share) const { return std::min(per_share, out - first(share)); }
};

bool contiguous_cpu_float(const at::Tensor& t) {
    return !t.defined() || (t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous());
}

}  // namespace

bool cpu_tree_pass_applies(const LlamaWeights& w) {
    if (best_matmul_kernel() == MatmulKernel::reference) return false;
    bool plain = contiguous_cpu_float(w.embed_tokens) && contiguous_cpu_float(w.norm) && contiguous_cpu_float(w.lm_head);
    for (const LayerWeights& l : w.layers)
        for (const at::Tensor* t : {&l.input_norm, &l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.q_bias, &l.k_bias,
                                    &l.v_bias, &l.post_attention_norm, &l.gate_proj, &l.up_proj, &l.down_proj})
            plain = plain && contiguous_cpu_float(*t);
    return plain;
}

TreeOutput cpu_tree_pass(const LlamaWeights& w, const PanelWeights* panels, const RotaryEmbedding& rotary,
                         KvCache& cache, const std::vector<int32_t>& tokens, const std::vector<int64_t>& positions,
                         const std::vector<uint8_t>& visible, int64_t logits_from, int threads, PassHelpers* helpers,
                         TreePassScratch& scratch) {
    const LlamaConfig& c = w.config;
    const MatmulKernel kernel = best_matmul_kernel();
    const auto n = static_cast<int64_t>(tokens.size());
    const int64_t size = c.hidden_size, inter = c.intermediate_size, dim = c.head_dim;
    const int64_t heads = c.num_attention_heads, kv_heads = c.num_key_value_heads, group = heads / kv_heads;
    const int64_t qw = c.query_width(), kvw = c.key_value_width();
    const int64_t prefix = cache.length(), seen = prefix + n, capacity = cache.capacity();
    for (const int64_t p : positions)
        if (p >= rotary.max_positions())
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                             "position beyond the rotary table (" + std::to_string(rotary.max_positions()) + ")");
    const float* cos_table = rotary.cos_table().data_ptr<float>();
    const float* sin_table = rotary.sin_table().data_ptr<float>();
    // Scores as combinations of the key panels where that kernel is
    // vectorized; otherwise as the small-m matmul's dot products with the key rows.
    const bool scores_by_combination = combine_rows_vectorized();
    const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
    const AttentionShape shape{n, prefix, seen, capacity, dim, group, qw, scale, visible, scores_by_combination, kernel};

    // Only the panels and the vectorized combinations compute a row alike
    // whatever rows are around it; the small-m kernel groups rows by count.
    const int64_t most_parts = std::min<int64_t>(threads, n / min_rows_per_part);
    const int parts = panels && scores_by_combination ? static_cast<int>(std::clamp<int64_t>(most_parts, 1, 64)) : 1;
    // A pass too small to split by rows splits its columns between the
    // helpers instead, a key/value head's queries, keys and values being
    // whole panels.
    const bool staged = parts == 1 && helpers && helpers->helpers() > 0 && panels && scores_by_combination &&
                        (group * dim) % PanelMatrix::width == 0 && dim % PanelMatrix::width == 0;

    TreeOutput out;
    out.hidden = at::empty({n, size}, at::kFloat);
    if (logits_from < n) out.logits = at::empty({n - logits_from, c.vocab_size}, at::kFloat);
    auto room = [](std::vector<float>& buffer, int64_t count) {
        return TreePassScratch::room(buffer, static_cast<size_t>(count));
    };
    // The staged pass attends with every key/value head at once: working
    // rows for each.
    const int64_t attending = staged ? kv_heads : 1;
    float* const x = room(scratch.x, n * size);
    float* const projected = room(scratch.projected, n * size);
    float* const q = room(scratch.q, n * qw);
    float* const k = room(scratch.k, n * kvw);
    float* const v = room(scratch.v, n * kvw);
    float* const grouped = room(scratch.grouped, attending * group * n * dim);  // a kv head's queries [group, n, dim]
    float* const scores = room(scratch.scores, attending * group * n * seen);
    float* const attended = room(scratch.attended, n * qw);
    float* const gate = room(scratch.gate, n * inter);
    float* const up = room(scratch.up, n * inter);
    float* const activated = room(scratch.activated, n * inter);
    float* const logits = out.logits.defined() ? out.logits.data_ptr<float>() : nullptr;

    const float* embedding = w.embed_tokens.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i)
        std::memcpy(&x[i * size], embedding + static_cast<int64_t>(tokens[i]) * size, sizeof(float) * size);
    auto data = [](const at::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; };

    if (staged) {
        // Four stages a layer: (1) per key/value head, its queries, keys and
        // values, their rotation, the cache's rows and the group's
        // attention; (2) o_proj's columns and the residual's; (3) gate's and
        // up's columns and their SwiGLU; (4) down_proj's columns and the
        // residual's. Then (5) the output head's columns. The norms read all
        // of x: each part computes them for itself, into rows of its own.
        const int wanted = 4 * helpers->parts();
        const ColumnShares hidden_shares(size, wanted), inter_shares(inter, wanted), head_shares(c.vocab_size, wanted);
        float* const normed_by_part = room(scratch.normed_by_part, helpers->parts() * n * size);
        const int stage_count = static_cast<int>(4 * c.num_hidden_layers + 1);
        helpers->run(stage_count, [&](int part, StagedShares& stages) {
            float* const normed = normed_by_part + part * n * size;
            int normed_at = -1;  // the stage whose norm `normed` holds
            auto norm_once = [&](int stage, const at::Tensor& weight) {
                if (normed_at == stage) return;
                rms_norm_rows(x, n, size, weight.data_ptr<float>(), c.rms_norm_eps, normed);
                normed_at = stage;
            };
            auto add_columns = [&](const float* from, int64_t first, int64_t width) {
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t col = first; col < first + width; ++col) x[i * size + col] += from[i * size + col];
            };
            int stage = 0;
            for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer, stage += 4) {
                const LayerWeights& l = w.layers[layer];
                const PanelLayer& p = panels->layers[layer];
                stages.run(stage, static_cast<int>(kv_heads), [&](int share) {
                    const int64_t h = share, q_first = h * group * dim, kv_first = h * dim;
                    norm_once(stage, l.input_norm);
                    combine_panel_columns(normed, n, size, p.q_proj, q_first, group * dim, data(l.q_bias), q, qw);
                    combine_panel_columns(normed, n, size, p.k_proj, kv_first, dim, data(l.k_bias), k, kvw);
                    combine_panel_columns(normed, n, size, p.v_proj, kv_first, dim, data(l.v_bias), v, kvw);
                    for (int64_t i = 0; i < n; ++i) {
                        const float* cos = cos_table + positions[i] * dim;
                        const float* sin = sin_table + positions[i] * dim;
                        rotate_heads(&q[i * qw + q_first], group, dim, cos, sin);
                        rotate_heads(&k[i * kvw + kv_first], 1, dim, cos, sin);
                        cache.write_node_head(layer, i, h, &k[i * kvw + kv_first], &v[i * kvw + kv_first]);
                    }
                    attend_group(shape, cache, layer, h, 0, n, q, grouped + h * group * n * dim,
                                 scores + h * group * n * seen, attended);
                });
                stages.run(stage + 1, hidden_shares.count, [&](int share) {
                    const int64_t first = hidden_shares.first(share), width = hidden_shares.width(share);
                    combine_panel_columns(attended, n, qw, p.o_proj, first, width, nullptr, projected, size);
                    add_columns(projected, first, width);
                });
                stages.run(stage + 2, inter_shares.count, [&](int share) {
                    const int64_t first = inter_shares.first(share), width = inter_shares.width(share);
                    norm_once(stage + 2, l.post_attention_norm);
                    combine_panel_columns(normed, n, size, p.gate_proj, first, width, nullptr, gate, inter);
                    combine_panel_columns(normed, n, size, p.up_proj, first, width, nullptr, up, inter);
                    for (int64_t i = 0; i < n; ++i)
                        swiglu(&gate[i * inter + first], &up[i * inter + first], width, &activated[i * inter + first]);
                });
                stages.run(stage + 3, hidden_shares.count, [&](int share) {
                    const int64_t first = hidden_shares.first(share), width = hidden_shares.width(share);
                    combine_panel_columns(activated, n, inter, p.down_proj, first, width, nullptr, projected, size);
                    add_columns(projected, first, width);
                });
            }
            stages.run(stage, logits ? head_shares.count : 0, [&](int share) {
                norm_once(stage, w.norm);
                combine_panel_columns(normed + logits_from * size, n - logits_from, size, panels->lm_head,
                                      head_shares.first(share), head_shares.width(share), nullptr, logits,
                                      c.vocab_size);
            });
        });
        rms_norm_rows(x, n, size, w.norm.data_ptr<float>(), c.rms_norm_eps, out.hidden.data_ptr<float>());
        return out;
    }

    float* normed = out.hidden.data_ptr<float>();  // the norms' output until the final one lands there
    // Part `part` computes the rows [begin, end) of every stage; the parts
    // meet once a layer, when every node's keys and values are in the cache.
    run_parts(parts, [&](int part, int parts_running, PartBarrier& barrier) {
        const int64_t begin = part_begin(n, part, parts_running), end = part_begin(n, part + 1, parts_running);
        const int64_t rows = end - begin;
        // y [rows, out] = in [rows, width] W^T (+ bias) for the part's rows,
        // W's panels when there are.
        auto project = [&](const float* in, int64_t width, const at::Tensor& weight, const PanelMatrix* panel,
                           const at::Tensor& bias, float* y) {
            const int64_t out_width = panel ? panel->out : weight.size(0);
            in += begin * width;
            y += begin * out_width;
            if (panel)
                combine_panels(in, rows, width, *panel, data(bias), y, out_width);
            else
                small_matmul_rows(kernel, in, rows, width, weight.data_ptr<float>(), out_width, width, data(bias), y,
                                  out_width);
        };
        auto add_rows = [&](float* to, const float* from) {
            for (int64_t i = begin * size; i < end * size; ++i) to[i] += from[i];
        };
        for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer) {
            const LayerWeights& l = w.layers[layer];
            const PanelLayer* p = panels ? &panels->layers[layer] : nullptr;
            rms_norm_rows(&x[begin * size], rows, size, l.input_norm.data_ptr<float>(), c.rms_norm_eps,
                          normed + begin * size);
            project(normed, size, l.q_proj, p ? &p->q_proj : nullptr, l.q_bias, q);
            project(normed, size, l.k_proj, p ? &p->k_proj : nullptr, l.k_bias, k);
            project(normed, size, l.v_proj, p ? &p->v_proj : nullptr, l.v_bias, v);
            for (int64_t i = begin; i < end; ++i) {
                const float* cos = cos_table + positions[i] * dim;
                const float* sin = sin_table + positions[i] * dim;
                rotate_heads(&q[i * qw], heads, dim, cos, sin);
                rotate_heads(&k[i * kvw], kv_heads, dim, cos, sin);
                cache.write_node(layer, i, &k[i * kvw], &v[i * kvw]);
            }
            if (parts_running > 1) barrier.arrive_and_wait();
            for (int64_t h = 0; h < kv_heads; ++h)
                attend_group(shape, cache, layer, h, begin, end, q, grouped, scores, attended);
            project(attended, qw, l.o_proj, p ? &p->o_proj : nullptr, {}, projected);
            add_rows(x, projected);
            rms_norm_rows(&x[begin * size], rows, size, l.post_attention_norm.data_ptr<float>(), c.rms_norm_eps,
                          normed + begin * size);
            project(normed, size, l.gate_proj, p ? &p->gate_proj : nullptr, {}, gate);
            project(normed, size, l.up_proj, p ? &p->up_proj : nullptr, {}, up);
            swiglu(&gate[begin * inter], &up[begin * inter], rows * inter, &activated[begin * inter]);
            project(activated, inter, l.down_proj, p ? &p->down_proj : nullptr, {}, projected);
            add_rows(x, projected);
        }
        rms_norm_rows(&x[begin * size], rows, size, w.norm.data_ptr<float>(), c.rms_norm_eps, normed + begin * size);
    });
    if (logits) {
        if (panels)
            combine_panels(normed + logits_from * size, n - logits_from, size, panels->lm_head, nullptr, logits,
                           c.vocab_size);
        else
            small_matmul_rows(kernel, normed + logits_from * size, n - logits_from, size, w.lm_head.data_ptr<float>(),
                              c.vocab_size, size, nullptr, logits, c.vocab_size);
    }
    return out;
}

}  // namespace cadenza::llama
