// The CPU pass's matrices as panels: each [out, in] projection stored as
// ceil(out / 64) panels of 64 outputs, panel p = rows [64 p, 64 p + 64) of
// the matrix transposed, [in, 64] row-major, the last padded with zeros.
// x W^T is then, panel by panel, a combination of the panel's rows weighted
// by the rows of x (combine_panels in row_combinations.h): each panel is one
// contiguous stream, all rows of x share each of its loads, and no sum is
// horizontal. A copy of the weights, taken when the model is made ready for
// inference (LlamaModel::pack_panels): training changes the row-major
// tensors, which the panels would not follow.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "llama_weights.h"

namespace cadenza::llama {

struct PanelMatrix {
    at::Tensor panels;  // [ceil(out / 64), in, 64] float32
    int64_t out = 0, in = 0;

    static constexpr int64_t width = 64;
    // Floats the panels of an [out, in] matrix take.
    static int64_t size_for(int64_t out, int64_t in);
    // From a contiguous float32 CPU matrix [out, in], into `storage`
    // (size_for floats, zeroed) or, without it, a tensor of its own.
    static PanelMatrix pack(const at::Tensor& matrix, at::Tensor storage = {});
    const float* data() const { return panels.data_ptr<float>(); }
};

// Matrices packed as panels in one allocation whose first float starts a
// 2 MiB page, which pack asks the kernel to back with huge pages
// (request_huge_pages): a pass streams all of them, and they take a few TLB
// entries instead of one per 4 KiB. Apart, no matrix under 2 MiB would hold
// a whole huge page.
struct PanelSet {
    at::Tensor arena;  // the page-aligned slice of one allocation that holds every panel
    std::vector<PanelMatrix> matrices;  // in the order given

    // From contiguous float32 CPU matrices [out, in].
    static PanelSet pack(const std::vector<at::Tensor>& matrices);
};

struct PanelLayer {
    PanelMatrix q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj;
};

// Every matrix of a pass in one PanelSet: on en-small 27 MB of panels in 14
// huge pages instead of ~6,700 small ones.
struct PanelWeights {
    std::vector<PanelLayer> layers;
    PanelMatrix lm_head;
    at::Tensor arena;  // PanelSet::arena

    static PanelWeights pack(const LlamaWeights& weights);
};

}  // namespace cadenza::llama
