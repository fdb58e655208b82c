// The int8 panels' kernels (int8_panels.h), compiled for AVX-512 with VNNI
// and dispatched at run time.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "int8_panels.h"
#include "int8_panels_kernel.h"
#include "row_blocks.h"

namespace cadenza::llama {
namespace {

// One panel (64 outputs, `groups` groups of 4 inputs) against R quantized
// rows: each group's 256 bytes are loaded once for all rows, and each of the
// 4 x 16 outputs gathers its 4 products per row in one vpdpbusd.
template <int R>
void combine_int8_panel(const QuantizedRows& x, int64_t first_row, const int8_t* panel, int64_t groups,
                        const float* w_scales, const int32_t* w_sums, int64_t width, float* y, int64_t y_stride) {
    __m512i acc[R][4];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < 4; ++j) acc[r][j] = _mm512_setzero_si512();
    const uint8_t* rows[R];
    for (int r = 0; r < R; ++r) rows[r] = x.values + (first_row + r) * x.stride;
    for (int64_t g = 0; g < groups; ++g) {
        const int8_t* p = panel + g * 256;
        _mm_prefetch(reinterpret_cast<const char*>(p + 2048), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p + 2048 + 64), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p + 2048 + 128), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(p + 2048 + 192), _MM_HINT_T0);
        const __m512i w0 = _mm512_loadu_si512(p), w1 = _mm512_loadu_si512(p + 64);
        const __m512i w2 = _mm512_loadu_si512(p + 128), w3 = _mm512_loadu_si512(p + 192);
        for (int r = 0; r < R; ++r) {
            int32_t four;
            std::memcpy(&four, rows[r] + 4 * g, sizeof(four));
            const __m512i a = _mm512_set1_epi32(four);
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], a, w0);
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], a, w1);
            acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], a, w2);
            acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], a, w3);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < 4 && 16 * j < width; ++j)
            store_scaled_sums(acc[r][j], w_sums + 16 * j, w_scales + 16 * j, x.scales[first_row + r], width - 16 * j,
                              y + (first_row + r) * y_stride + 16 * j);
}

}  // namespace

void quantize_rows_avx512(const float* x, int64_t m, int64_t x_stride, int64_t in, QuantizedRows& out) {
    const int64_t padded = (in + 3) / 4 * 4;
    for (int64_t i = 0; i < m; ++i) {
        const float* row = x + i * x_stride;
        __m512 peak = _mm512_setzero_ps();
        int64_t k = 0;
        for (; k + 16 <= in; k += 16) peak = _mm512_max_ps(peak, _mm512_abs_ps(_mm512_loadu_ps(row + k)));
        float amax = _mm512_reduce_max_ps(peak);
        for (; k < in; ++k) amax = row[k] > amax ? row[k] : (-row[k] > amax ? -row[k] : amax);
        const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
        out.scales[i] = step;
        const __m512 inverse = _mm512_set1_ps(1.0f / step);
        const __m512i offset = _mm512_set1_epi32(128);
        uint8_t* q = out.values + i * out.stride;
        for (k = 0; k + 16 <= in; k += 16) {
            const __m512i whole = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(row + k), inverse));
            const __m512i clamped = _mm512_min_epi32(_mm512_max_epi32(whole, _mm512_set1_epi32(-127)),
                                                     _mm512_set1_epi32(127));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + k), _mm512_cvtepi32_epi8(_mm512_add_epi32(clamped, offset)));
        }
        for (; k < in; ++k) {
            int32_t whole = static_cast<int32_t>(__builtin_nearbyintf(row[k] * (1.0f / step)));
            whole = whole < -127 ? -127 : (whole > 127 ? 127 : whole);
            q[k] = static_cast<uint8_t>(whole + 128);
        }
        for (; k < padded; ++k) q[k] = 128;  // zero: the padded weights are zero too
    }
}

void combine_int8_panels_vnni(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                              const int32_t* w_sums, int64_t in, int64_t out, float* y, int64_t y_stride) {
    const int64_t groups = (in + 3) / 4;
    for (int64_t first = 0; first < out; first += 64) {
        const int8_t* panel = panels + (first / 64) * groups * 256;
        const int64_t width = out - first < 64 ? out - first : 64;
        in_blocks_of<4>(m, [&](auto rows, int64_t r) {
            combine_int8_panel<decltype(rows)::value>(x, r, panel, groups, w_scales + first, w_sums + first, width,
                                                      y + first, y_stride);
        });
    }
}

}  // namespace cadenza::llama
