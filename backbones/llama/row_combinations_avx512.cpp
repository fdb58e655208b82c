// combine_rows and combine_panels for AVX-512F. This file alone is compiled with -mavx512f
// -mavx2 -mfma (and without the precompiled header), and uses nothing from
// the standard library, as small_matmul_avx512.cpp.
#include <immintrin.h>

#include "row_blocks.h"
#include "row_combinations.h"

namespace cadenza::llama {
namespace {

// Rows r < R of out, columns [first, first + 16 C), the last piece only its
// first `tail` lanes when Tail: the R * C sums stay in registers and each
// 16-float piece of a row of b is loaded once for all R rows (R = 6, C = 4
// use 28 of the 32 registers).
// With Prefetch, b is one contiguous stream (a panel: b_stride = 16 C) and
// each of its lines is prefetched `prefetch_floats` ahead.
constexpr int64_t prefetch_floats = 3072;

// A 16-entry piece of a row of b, as float32: b in float32, or in float16
// converted on load (the tail piece copied into zeros first: a masked
// 16-bit load needs AVX-512BW, which this file does not assume).
inline __m512 load_piece(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load_piece(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline __m512 load_tail_piece(const float* p, __mmask16 lanes, int64_t) { return _mm512_maskz_loadu_ps(lanes, p); }
inline __m512 load_tail_piece(const uint16_t* p, __mmask16, int64_t tail) {
    uint16_t piece[16] = {};
    for (int64_t i = 0; i < tail; ++i) piece[i] = p[i];
    return load_piece(piece);
}

template <int R, int C, bool Tail, bool Prefetch = false, class B = float>
inline void combine_block(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                          int64_t first, int64_t tail, float* out, int64_t out_stride) {
    const __mmask16 last = Tail ? static_cast<__mmask16>((1u << tail) - 1u) : static_cast<__mmask16>(0xFFFF);
    __m512 sum[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) sum[r][c] = _mm512_setzero_ps();
    for (int64_t k = 0; k < count; ++k) {
        const B* row = b + k * b_stride + first;
        if constexpr (Prefetch) {
#pragma GCC unroll 4
            for (int c = 0; c < C; ++c)
                _mm_prefetch(reinterpret_cast<const char*>(row + prefetch_floats + 16 * c), _MM_HINT_T0);
        }
        __m512 piece[C];
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
            piece[c] = Tail && c == C - 1 ? load_tail_piece(row + 16 * c, last, tail) : load_piece(row + 16 * c);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512 weight = _mm512_set1_ps(a[r * a_stride + k]);
#pragma GCC unroll 4
            for (int c = 0; c < C; ++c) sum[r][c] = _mm512_fmadd_ps(weight, piece[c], sum[r][c]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) {
            float* to = out + r * out_stride + first + 16 * c;
            if (Tail && c == C - 1)
                _mm512_mask_storeu_ps(to, last, sum[r][c]);
            else
                _mm512_storeu_ps(to, sum[r][c]);
        }
}

template <int R, bool Tail, class B>
inline void combine_rest(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                         int64_t first, int64_t pieces, int64_t tail, float* out, int64_t out_stride) {
    switch (pieces) {
        case 1: return combine_block<R, 1, Tail, false>(a, a_stride, b, count, b_stride, first, tail, out, out_stride);
        case 2: return combine_block<R, 2, Tail, false>(a, a_stride, b, count, b_stride, first, tail, out, out_stride);
        case 3: return combine_block<R, 3, Tail, false>(a, a_stride, b, count, b_stride, first, tail, out, out_stride);
        case 4: return combine_block<R, 4, Tail, false>(a, a_stride, b, count, b_stride, first, tail, out, out_stride);
        default: return;
    }
}

template <int R, class B>
inline void combine_rows_of(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                            int64_t width, float* out, int64_t out_stride) {
    int64_t first = 0;
    for (; first + 64 <= width; first += 64)
        combine_block<R, 4, false, false>(a, a_stride, b, count, b_stride, first, 0, out, out_stride);
    const int64_t left = width - first, tail = left % 16;
    if (tail > 0)
        combine_rest<R, true>(a, a_stride, b, count, b_stride, first, left / 16 + 1, tail, out, out_stride);
    else
        combine_rest<R, false>(a, a_stride, b, count, b_stride, first, left / 16, 0, out, out_stride);
}

// One panel [in, 64] (the last `width` < 64 columns wide): whole panels as
// one prefetched stream.
template <int R>
inline void combine_panel(const float* x, int64_t x_stride, const float* panel, int64_t in, int64_t width, float* y,
                          int64_t y_stride) {
    if (width == 64)
        combine_block<R, 4, false, true>(x, x_stride, panel, in, 64, 0, 0, y, y_stride);
    else
        combine_rows_of<R>(x, x_stride, panel, in, 64, width, y, y_stride);
}

// combine_block<R, 4, false, true> over a panel of float16 weights: each
// 16-weight piece is converted on load, so a pass streams half the bytes.
// The panel is always 64 wide (zero-padded): only the stores of the last
// panel stop at `width`.
constexpr int64_t prefetch_halves = 2 * prefetch_floats;

template <int R>
inline void combine_half_panel(const float* x, int64_t x_stride, const uint16_t* panel, int64_t in, int64_t width,
                               float* y, int64_t y_stride) {
    __m512 sum[R][4];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) sum[r][c] = _mm512_setzero_ps();
    for (int64_t k = 0; k < in; ++k) {
        const uint16_t* row = panel + k * 64;
        _mm_prefetch(reinterpret_cast<const char*>(row + prefetch_halves), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(row + prefetch_halves + 32), _MM_HINT_T0);
        __m512 piece[4];
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c)
            piece[c] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 16 * c)));
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const __m512 weight = _mm512_set1_ps(x[r * x_stride + k]);
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) sum[r][c] = _mm512_fmadd_ps(weight, piece[c], sum[r][c]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const int64_t left = width - 16 * c;
            if (left <= 0) break;
            const __mmask16 lanes = left >= 16 ? static_cast<__mmask16>(0xFFFF)
                                               : static_cast<__mmask16>((1u << left) - 1u);
            _mm512_mask_storeu_ps(y + r * y_stride + 16 * c, lanes, sum[r][c]);
        }
}

}  // namespace

void combine_half_panels_avx512(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in,
                                int64_t out, float* y, int64_t y_stride) {
    for (int64_t first = 0; first < out; first += 64) {
        const uint16_t* panel = panels + (first / 64) * in * 64;
        const int64_t width = out - first < 64 ? out - first : 64;
        in_blocks_of<6>(m, [&](auto rows, int64_t r) {
            combine_half_panel<decltype(rows)::value>(x + r * x_stride, x_stride, panel, in, width,
                                                      y + r * y_stride + first, y_stride);
        });
    }
}

void combine_panels_avx512(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                           float* y, int64_t y_stride) {
    for (int64_t first = 0; first < out; first += 64) {
        const float* panel = panels + (first / 64) * in * 64;
        const int64_t width = out - first < 64 ? out - first : 64;
        in_blocks_of<6>(m, [&](auto rows, int64_t r) {
            combine_panel<decltype(rows)::value>(x + r * x_stride, x_stride, panel, in, width, y + r * y_stride + first,
                                                 y_stride);
        });
    }
}

void combine_rows_avx512(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count,
                         int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    in_blocks_of<6>(rows, [&](auto block, int64_t r) {
        combine_rows_of<decltype(block)::value>(a + r * a_stride, a_stride, b, count, b_stride, width,
                                                out + r * out_stride, out_stride);
    });
}

void combine_half_rows_avx512(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                              int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    in_blocks_of<6>(rows, [&](auto block, int64_t r) {
        combine_rows_of<decltype(block)::value>(a + r * a_stride, a_stride, b, count, b_stride, width,
                                                out + r * out_stride, out_stride);
    });
}

}  // namespace cadenza::llama
