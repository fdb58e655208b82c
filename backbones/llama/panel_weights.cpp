#include "panel_weights.h"

#include <cstdint>
#include <cstring>

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

PanelWeights PanelWeights::pack(const LlamaWeights& weights) {
    auto size_of = [](const at::Tensor& m) { return PanelMatrix::size_for(m.size(0), m.size(1)); };
    int64_t total = size_of(weights.lm_head);
    for (const LayerWeights& l : weights.layers)
        for (const at::Tensor* m : {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
            total += size_of(*m);

    constexpr int64_t page_floats = (int64_t{2} << 20) / static_cast<int64_t>(sizeof(float));
    const at::Tensor allocation = at::zeros({total + page_floats}, at::kFloat);
    const auto address = reinterpret_cast<uintptr_t>(allocation.data_ptr<float>());
    const auto page = static_cast<uintptr_t>(page_floats * sizeof(float));
    const int64_t skip = static_cast<int64_t>(((page - address % page) % page) / sizeof(float));

    PanelWeights packed;
    packed.arena = allocation.narrow(0, skip, total);
    int64_t used = 0;
    auto pack = [&](const at::Tensor& m) {
        const int64_t size = size_of(m);
        PanelMatrix matrix = PanelMatrix::pack(m, packed.arena.narrow(0, used, size));
        used += size;
        return matrix;
    };
    for (const LayerWeights& l : weights.layers)
        packed.layers.push_back(PanelLayer{pack(l.q_proj), pack(l.k_proj), pack(l.v_proj), pack(l.o_proj),
                                           pack(l.gate_proj), pack(l.up_proj), pack(l.down_proj)});
    packed.lm_head = pack(weights.lm_head);
    return packed;
}

}  // namespace cadenza::llama
