#include "panel_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "huge_pages.h"
#include "int8_panels.h"
#include "row_combinations.h"

namespace cadenza::llama {

namespace {

at::ScalarType panel_type(PanelPrecision precision) {
    switch (precision) {
        case PanelPrecision::float16: return at::kHalf;
        case PanelPrecision::int8: return at::kChar;
        default: return at::kFloat;
    }
}

// Output o's weights rounded to 127 steps of their largest magnitude, into
// the int8 layout (int8_panels.h).
void pack_int8(PanelMatrix& packed, const float* rows) {
    const int64_t groups = (packed.in + 3) / 4;
    int8_t* panels = packed.panels.data_ptr<int8_t>();
    float* scales = packed.scales.data_ptr<float>();
    int32_t* sums = packed.sums.data_ptr<int32_t>();
    for (int64_t o = 0; o < packed.out; ++o) {
        const float* row = rows + o * packed.in;
        float amax = 0.0f;
        for (int64_t k = 0; k < packed.in; ++k) amax = std::max(amax, std::abs(row[k]));
        const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
        scales[o] = step;
        int8_t* panel = panels + (o / PanelMatrix::width) * groups * 256;
        int32_t sum = 0;
        for (int64_t k = 0; k < packed.in; ++k) {
            const float whole = std::min(127.0f, std::max(-127.0f, std::nearbyint(row[k] / step)));
            const auto value = static_cast<int8_t>(whole);
            panel[(k / 4) * 256 + (o % PanelMatrix::width) * 4 + k % 4] = value;
            sum += value;
        }
        sums[o] = sum;
    }
}

}  // namespace

int64_t PanelMatrix::width_for(PanelPrecision precision) {
    return precision == PanelPrecision::float32 && narrow_panels_preferred() ? narrow_width : width;
}

int64_t PanelMatrix::size_for(int64_t out, int64_t in, PanelPrecision precision) {
    const int64_t inputs = precision == PanelPrecision::int8 ? (in + 3) / 4 * 4 : in;
    const int64_t columns = width_for(precision);
    return (out + columns - 1) / columns * inputs * columns;
}

PanelMatrix PanelMatrix::pack(const at::Tensor& matrix, at::Tensor storage, PanelPrecision precision) {
    PanelMatrix packed;
    packed.out = matrix.size(0);
    packed.in = matrix.size(1);
    const int64_t count = (packed.out + width - 1) / width;
    const at::Tensor source = matrix.contiguous();
    const float* rows = source.data_ptr<float>();
    if (precision == PanelPrecision::int8) {
        const int64_t size = size_for(packed.out, packed.in, precision);
        packed.panels = storage.defined() ? storage.view({count, size / count}) : at::zeros({count, size / count}, at::kChar);
        packed.scales = at::zeros({count * width}, at::kFloat);
        packed.sums = at::zeros({count * width}, at::kInt);
        pack_int8(packed, rows);
        packed.int8_panels = packed.panels.data_ptr<int8_t>();
        packed.int8_scales = packed.scales.data_ptr<float>();
        packed.int8_sums = packed.sums.data_ptr<int32_t>();
        return packed;
    }
    const auto type = panel_type(precision);
    const int64_t columns = width_for(precision);
    packed.narrow = columns == narrow_width;
    const int64_t panels = (packed.out + columns - 1) / columns;
    packed.panels = storage.defined() ? storage.view({panels, packed.in, columns})
                                      : at::zeros({panels, packed.in, columns}, type);
    auto scatter = [&](auto* panels, auto convert) {
        for (int64_t o = 0; o < packed.out; ++o) {
            auto* column = panels + (o / columns) * packed.in * columns + o % columns;
            const float* row = rows + o * packed.in;
            for (int64_t k = 0; k < packed.in; ++k) column[k * columns] = convert(row[k]);
        }
    };
    if (packed.half())
        scatter(packed.panels.data_ptr<at::Half>(), [](float v) { return at::Half(v); });
    else
        scatter(packed.panels.data_ptr<float>(), [](float v) { return v; });
    return packed;
}

void combine_panels(const float* x, int64_t m, int64_t x_stride, const PanelMatrix& w, const float* bias, float* y,
                    int64_t y_stride) {
    combine_panel_columns(x, m, x_stride, w, 0, w.out, bias, y, y_stride);
}

void combine_panel_columns(const float* x, int64_t m, int64_t x_stride, const PanelMatrix& w, int64_t first,
                           int64_t count, const float* bias, float* y, int64_t y_stride) {
    if (first % PanelMatrix::width != 0 || first < 0 || count < 0 || first + count > w.out)
        throw sdk::Error(CDZ_STATUS_INTERNAL, "panel columns [" + std::to_string(first) + ", " +
                                                  std::to_string(first + count) + ") of a matrix of " +
                                                  std::to_string(w.out) + " outputs");
    const int64_t skip = first * w.in;  // whole panels [in, 64] (or [in, 16]) before the first column
    const float* columns_bias = bias ? bias + first : nullptr;
    if (w.int8()) {
        const int64_t panel_bytes = (w.in + 3) / 4 * 4 * PanelMatrix::width;
        combine_int8_panels(x, m, x_stride, w.int8_panels + first / PanelMatrix::width * panel_bytes,
                            w.int8_scales + first, w.int8_sums + first, w.in, count, columns_bias, y + first,
                            y_stride);
        return;
    }
    if (w.half())
        combine_half_panels(x, m, x_stride, reinterpret_cast<const uint16_t*>(w.panels.data_ptr<at::Half>()) + skip,
                            w.in, count, columns_bias, y + first, y_stride);
    else if (w.narrow)
        combine_narrow_panels(x, m, x_stride, w.data() + skip, w.in, count, columns_bias, y + first, y_stride);
    else
        combine_panels(x, m, x_stride, w.data() + skip, w.in, count, columns_bias, y + first, y_stride);
}

PanelSet PanelSet::pack(const std::vector<at::Tensor>& matrices, PanelPrecision precision) {
    int64_t total = 0;
    for (const at::Tensor& m : matrices) total += PanelMatrix::size_for(m.size(0), m.size(1), precision);

    const auto type = panel_type(precision);
    const auto element = static_cast<int64_t>(at::elementSize(type));
    const int64_t page_elements = (int64_t{2} << 20) / element;
    const at::Tensor allocation = at::zeros({total + page_elements}, type);
    const auto address = reinterpret_cast<uintptr_t>(allocation.data_ptr());
    const auto page = static_cast<uintptr_t>(page_elements * element);
    const int64_t skip = static_cast<int64_t>(((page - address % page) % page) / static_cast<uintptr_t>(element));

    PanelSet set;
    set.arena = allocation.narrow(0, skip, total);
    int64_t used = 0;
    for (const at::Tensor& m : matrices) {
        const int64_t size = PanelMatrix::size_for(m.size(0), m.size(1), precision);
        set.matrices.push_back(PanelMatrix::pack(m, set.arena.narrow(0, used, size), precision));
        used += size;
    }
    request_huge_pages({set.arena});
    return set;
}

PanelWeights PanelWeights::pack(const LlamaWeights& weights, PanelPrecision precision) {
    std::vector<at::Tensor> matrices;
    for (const LayerWeights& l : weights.layers)
        matrices.insert(matrices.end(), {l.q_proj, l.k_proj, l.v_proj, l.o_proj, l.gate_proj, l.up_proj, l.down_proj});
    matrices.push_back(weights.lm_head);
    const PanelSet set = PanelSet::pack(matrices, precision);

    PanelWeights packed;
    packed.arena = set.arena;
    const std::vector<PanelMatrix>& m = set.matrices;
    for (size_t i = 0; i + 1 < m.size(); i += 7)
        packed.layers.push_back(PanelLayer{m[i], m[i + 1], m[i + 2], m[i + 3], m[i + 4], m[i + 5], m[i + 6]});
    packed.lm_head = m.back();
    return packed;
}

}  // namespace cadenza::llama
