// The panel loop of HalfPanels::multiply, generic in the vector ISA. Included
// only by half_panels_avx512.cpp and half_panels_avx2.cpp, each compiled for
// its ISA alone; everything here is in an anonymous namespace so that no
// function compiled with wider instructions is shared with code that runs on
// any CPU.
//
// A traits type V provides: acc (16 floats in one or two registers),
// zero(), load(halves) (16 halves as floats), broadcast(float),
// fma(w, x, acc) = w * x + acc, store(acc, float* 16).
#pragma once

#include <cstdint>

namespace cadenza::drafts {
namespace {

template <class V, int P>
inline void panel_group(const uint16_t* halves, int64_t cols, const float* x, float* out) {
    typename V::acc acc[P];
#pragma GCC unroll 8
    for (int i = 0; i < P; ++i) acc[i] = V::zero();
    for (int64_t c = 0; c < cols; ++c) {
        const auto xc = V::broadcast(x[c]);
#pragma GCC unroll 8
        for (int i = 0; i < P; ++i) acc[i] = V::fma(V::load(halves + (i * cols + c) * 16), xc, acc[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < P; ++i) V::store(acc[i], out + i * 16);
}

// Four panels side by side (four independent chains of multiply-adds), then
// one at a time; each output is its sum plus the bias.
template <class V>
void half_panels(const uint16_t* halves, int64_t cols, int64_t rows, const float* x, const float* bias, float* y) {
    const int64_t panels = (rows + 15) / 16;
    float sums[4 * 16];
    for (int64_t p = 0; p < panels;) {
        const int group = panels - p >= 4 ? 4 : 1;
        if (group == 4)
            panel_group<V, 4>(halves + p * cols * 16, cols, x, sums);
        else
            panel_group<V, 1>(halves + p * cols * 16, cols, x, sums);
        const int64_t first = p * 16, last = (p + group) * 16 < rows ? (p + group) * 16 : rows;
        for (int64_t r = first; r < last; ++r) y[r] = bias ? sums[r - first] + bias[r] : sums[r - first];
        p += group;
    }
}

}  // namespace
}  // namespace cadenza::drafts
