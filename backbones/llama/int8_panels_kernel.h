// What the int8 panels' two kernels (int8_panels_vnni.cpp, int8_panels_amx.cpp)
// share: the last step from exact int32 sums to floats, so that both give
// the same bits. Only for files compiled with AVX-512.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace cadenza::llama {

// One row's sums over 16 outputs (their first `width` kept, width > 0): the
// row's bytes are value + 128, so 128 x each output's weight sum comes out
// first; then the output's step times the row's.
inline void store_scaled_sums(__m512i sums, const int32_t* w_sums, const float* w_scales, float row_scale,
                              int64_t width, float* out) {
    const __mmask16 mask = width >= 16 ? __mmask16(0xffff) : __mmask16((1u << width) - 1u);
    const __m512i weight_sums = _mm512_maskz_loadu_epi32(mask, w_sums);
    const __m512i exact = _mm512_sub_epi32(sums, _mm512_mullo_epi32(weight_sums, _mm512_set1_epi32(128)));
    const __m512 scales = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, w_scales), _mm512_set1_ps(row_scale));
    _mm512_mask_storeu_ps(out, mask, _mm512_mul_ps(_mm512_cvtepi32_ps(exact), scales));
}

}  // namespace cadenza::llama
