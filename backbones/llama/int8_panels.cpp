#include "int8_panels.h"

#include <vector>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::llama {

bool int8_panels_vnni_supported() {
    static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                  __builtin_cpu_supports("avx512vnni");
    return supported;
}

bool int8_panels_supported() {
    static const bool supported = int8_panels_vnni_supported() || __builtin_cpu_supports("avx2");
    return supported;
}

void combine_int8_panels(const float* x, int64_t m, int64_t x_stride, const int8_t* panels, const float* w_scales,
                         const int32_t* w_sums, int64_t in, int64_t out, const float* bias, float* y,
                         int64_t y_stride) {
    if (!int8_panels_supported())
        throw sdk::Error(CDZ_STATUS_INTERNAL, "int8 panels need AVX-512 VNNI or AVX2, which this CPU does not have");
    // The rows' bytes and steps, kept per thread (the parts of a pass run on
    // two) so that no projection allocates.
    thread_local std::vector<uint8_t> values;
    thread_local std::vector<float> scales;
    const int64_t stride = (in + 3) / 4 * 4;
    if (values.size() < static_cast<size_t>(m * stride)) values.resize(static_cast<size_t>(m * stride));
    if (scales.size() < static_cast<size_t>(m)) scales.resize(static_cast<size_t>(m));
    QuantizedRows rows{values.data(), stride, scales.data()};
    const bool vnni = int8_panels_vnni_supported();
    if (vnni)
        quantize_rows_avx512(x, m, x_stride, in, rows);
    else
        quantize_rows_avx2(x, m, x_stride, in, rows);
    // A prompt's rows in blocks of 16 on AMX tiles (~16x vpdpbusd's
    // multiply-adds a cycle), the rest on VNNI (or AVX2 without it).
    int64_t tiled = 0;
    if (m >= 16 && in % 64 == 0 && amx_int8_supported()) {
        tiled = m / 16 * 16;
        combine_int8_panels_amx(rows, tiled, panels, w_scales, w_sums, in, out, y, y_stride);
    }
    if (tiled < m) {
        const QuantizedRows rest{rows.values + tiled * stride, stride, rows.scales + tiled};
        if (vnni)
            combine_int8_panels_vnni(rest, m - tiled, panels, w_scales, w_sums, in, out, y + tiled * y_stride,
                                     y_stride);
        else
            combine_int8_panels_avx2(rest, m - tiled, panels, w_scales, in, out, y + tiled * y_stride, y_stride);
    }
    if (bias)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t o = 0; o < out; ++o) y[i * y_stride + o] += bias[o];
}

}  // namespace cadenza::llama
