#include "panel_weights.h"

#include <cstdint>
#include <cstring>

#include "huge_pages.h"

namespace cadenza::llama {

int64_t PanelMatrix::size_for(int64_t out, int64_t in) { return (out + width - 1) / width * in * width; }

PanelMatrix PanelMatrix::pack(const at::Tensor& matrix, at::Tensor storage) {
    PanelMatrix packed;
    packed.out = matrix.size(0);
    packed.in = matrix.size(1);
    const int64_t count = (packed.out + width - 1) / width;
    packed.panels = storage.defined() ? storage.view({count, packed.in, width})
                                      : at::zeros({count, packed.in, width}, at::kFloat);
    const at::Tensor source = matrix.contiguous();
    const float* rows = source.data_ptr<float>();
    float* panels = packed.panels.data_ptr<float>();
    for (int64_t o = 0; o < packed.out; ++o) {
        float* column = panels + (o / width) * packed.in * width + o % width;
        const float* row = rows + o * packed.in;
        for (int64_t k = 0; k < packed.in; ++k) column[k * width] = row[k];
    }
    return packed;
}

PanelSet PanelSet::pack(const std::vector<at::Tensor>& matrices) {
    int64_t total = 0;
    for (const at::Tensor& m : matrices) total += PanelMatrix::size_for(m.size(0), m.size(1));

    constexpr int64_t page_floats = (int64_t{2} << 20) / static_cast<int64_t>(sizeof(float));
    const at::Tensor allocation = at::zeros({total + page_floats}, at::kFloat);
    const auto address = reinterpret_cast<uintptr_t>(allocation.data_ptr<float>());
    const auto page = static_cast<uintptr_t>(page_floats * sizeof(float));
    const int64_t skip = static_cast<int64_t>(((page - address % page) % page) / sizeof(float));

    PanelSet set;
    set.arena = allocation.narrow(0, skip, total);
    int64_t used = 0;
    for (const at::Tensor& m : matrices) {
        const int64_t size = PanelMatrix::size_for(m.size(0), m.size(1));
        set.matrices.push_back(PanelMatrix::pack(m, set.arena.narrow(0, used, size)));
        used += size;
    }
    request_huge_pages({set.arena});
    return set;
}

PanelWeights PanelWeights::pack(const LlamaWeights& weights) {
    std::vector<at::Tensor> matrices;
    for (const LayerWeights& l : weights.layers)
        matrices.insert(matrices.end(), {l.q_proj, l.k_proj, l.v_proj, l.o_proj, l.gate_proj, l.up_proj, l.down_proj});
    matrices.push_back(weights.lm_head);
    const PanelSet set = PanelSet::pack(matrices);

    PanelWeights packed;
    packed.arena = set.arena;
    const std::vector<PanelMatrix>& m = set.matrices;
    for (size_t i = 0; i + 1 < m.size(); i += 7)
        packed.layers.push_back(PanelLayer{m[i], m[i + 1], m[i + 2], m[i + 3], m[i + 4], m[i + 5], m[i + 6]});
    packed.lm_head = m.back();
    return packed;
}

}  // namespace cadenza::llama
