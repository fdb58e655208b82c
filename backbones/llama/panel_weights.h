// The CPU pass's matrices as panels: each [out, in] projection stored as
// ceil(out / 64) panels of 64 outputs, panel p = rows [64 p, 64 p + 64) of
// the matrix transposed, [in, 64] row-major, the last padded with zeros
// (float32 for the AVX2 kernel: ceil(out / 16) narrow panels [in, 16],
// row_combinations.h).
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
#include "row_combinations.h"

namespace cadenza::llama {

// How the panels store the weights: float32, or float16 converted to
// float32 as the kernel loads them (half the bytes a pass streams; the sums
// are float32's, over the weights rounded to the nearest float16), or int8
// with a step per output (int8_panels.h: the rows are rounded too, and the
// sums are int32's; AVX-512 VNNI's or AVX2's, the same bits).
enum class PanelPrecision { float32, float16, int8 };

struct PanelMatrix {
    at::Tensor panels;  // [ceil(out / 64), in, 64] float32 or float16 (at::kHalf), [ceil(out / 16), in, 16] if narrow; int8 (at::kChar): int8_panels.h
    at::Tensor scales;  // int8 only: [ceil(out / 64) * 64] float32, each output's step
    at::Tensor sums;    // int8 only: [ceil(out / 64) * 64] int32, each output's sum of its int8 weights
    int64_t out = 0, in = 0;
    // int8 only: the three tensors' data, taken once (a projection reads
    // them for every call, and data_ptr checks the type each time).
    const int8_t* int8_panels = nullptr;
    const float* int8_scales = nullptr;
    const int32_t* int8_sums = nullptr;

    bool narrow = false;  // float32 panels 16 outputs wide (narrow_panels_preferred())

    // The panels' width, and the columns combine_panel_columns starts at a multiple of.
    static constexpr int64_t width = 64;
    static constexpr int64_t narrow_width = narrow_panel_width;
    // The width of the panels packed now: narrow_width for float32 on the
    // AVX2 kernel (narrow_panels_preferred()), else width.
    static int64_t width_for(PanelPrecision precision);
    // Elements (of the precision's type) the panels of an [out, in] matrix take.
    static int64_t size_for(int64_t out, int64_t in, PanelPrecision precision = PanelPrecision::float32);
    // From a contiguous float32 CPU matrix [out, in], into `storage`
    // (size_for weights of the precision's type, zeroed) or, without it, a
    // tensor of its own.
    static PanelMatrix pack(const at::Tensor& matrix, at::Tensor storage = {},
                            PanelPrecision precision = PanelPrecision::float32);
    bool half() const { return panels.scalar_type() == at::kHalf; }
    bool int8() const { return int8_panels != nullptr; }
    const float* data() const { return panels.data_ptr<float>(); }
};

// y = x W^T + bias (row_combinations.h: combine_panels, combine_half_panels).
void combine_panels(const float* x, int64_t m, int64_t x_stride, const PanelMatrix& w, const float* bias, float* y,
                    int64_t y_stride);
// The same for the output columns [first, first + count) alone (first a
// multiple of PanelMatrix::width): y's columns [first, first + count), each
// the same bits as combine_panels writes there.
void combine_panel_columns(const float* x, int64_t m, int64_t x_stride, const PanelMatrix& w, int64_t first,
                           int64_t count, const float* bias, float* y, int64_t y_stride);

// Matrices packed as panels in one allocation whose first float starts a
// 2 MiB page, which pack asks the kernel to back with huge pages
// (request_huge_pages): a pass streams all of them, and they take a few TLB
// entries instead of one per 4 KiB. Apart, no matrix under 2 MiB would hold
// a whole huge page.
struct PanelSet {
    at::Tensor arena;  // the page-aligned slice of one allocation that holds every panel
    std::vector<PanelMatrix> matrices;  // in the order given

    // From contiguous float32 CPU matrices [out, in].
    static PanelSet pack(const std::vector<at::Tensor>& matrices, PanelPrecision precision = PanelPrecision::float32);
};

struct PanelLayer {
    PanelMatrix q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj;
};

// Every matrix of a pass in one PanelSet: on en-small 27 MB of panels (13.7
// MB in float16) in 14 huge pages instead of ~6,700 small ones.
struct PanelWeights {
    std::vector<PanelLayer> layers;
    PanelMatrix lm_head;
    at::Tensor arena;  // PanelSet::arena

    static PanelWeights pack(const LlamaWeights& weights, PanelPrecision precision = PanelPrecision::float32);
};

}  // namespace cadenza::llama
