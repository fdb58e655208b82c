#include "panel_weights.h"

#include <cstring>

namespace cadenza::llama {

PanelMatrix PanelMatrix::pack(const at::Tensor& matrix) {
    PanelMatrix packed;
    packed.out = matrix.size(0);
    packed.in = matrix.size(1);
    const int64_t count = (packed.out + width - 1) / width;
    packed.panels = at::zeros({count, packed.in, width}, at::kFloat);
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
    PanelWeights packed;
    for (const LayerWeights& l : weights.layers)
        packed.layers.push_back(PanelLayer{PanelMatrix::pack(l.q_proj), PanelMatrix::pack(l.k_proj),
                                           PanelMatrix::pack(l.v_proj), PanelMatrix::pack(l.o_proj),
                                           PanelMatrix::pack(l.gate_proj), PanelMatrix::pack(l.up_proj),
                                           PanelMatrix::pack(l.down_proj)});
    packed.lm_head = PanelMatrix::pack(weights.lm_head);
    return packed;
}

std::vector<at::Tensor> PanelWeights::tensors() const {
    std::vector<at::Tensor> all;
    for (const PanelLayer& l : layers)
        for (const PanelMatrix* m :
             {&l.q_proj, &l.k_proj, &l.v_proj, &l.o_proj, &l.gate_proj, &l.up_proj, &l.down_proj})
            all.push_back(m->panels);
    all.push_back(lm_head.panels);
    return all;
}

}  // namespace cadenza::llama
