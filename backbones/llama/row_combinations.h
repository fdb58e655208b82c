// Rows of a combining rows of b: out row r = sum_k a[r][k] * b row k, the
// product of a few rows of `a` with a row-major matrix b. The attention uses
// it for the value rows weighted by a query's probabilities, and, as
// combine_panels, for a query's scores against the keys stored as panels of
// positions (KvCache::key_panels).
#pragma once

#include <cstdint>

namespace cadenza::llama {

// out[r * out_stride + j] = sum over k < count, in order, of a[r * a_stride +
// k] * b[k * b_stride + j], for r < rows and j < width.
void combine_rows(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count, int64_t b_stride,
                  int64_t width, float* out, int64_t out_stride);

// combine_rows with b's entries in float16 (IEEE binary16), each converted
// to float32 as it is loaded: the same sums, in the same order, as
// combine_rows over those values in float32. Only with a vectorized kernel
// (combine_rows_vectorized()): a float16 KV cache's keys and values.
void combine_half_rows(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                       int64_t b_stride, int64_t width, float* out, int64_t out_stride);

// Whether combine_rows runs a vectorized kernel: AVX-512F, or AVX2 with FMA
// and F16C (best_matmul_kernel() is avx512, or avx2 on a CPU with F16C; the
// two give the same bits): up to six rows of `a` share each sweep over b's rows, their sums
// in registers, so the attention's scores are cheaper this way than through
// the small-m matmul's dot products. Otherwise it runs plain loops, one row
// of `a` at a time.
bool combine_rows_vectorized();

// What the panels and the float16 caches need, as the plugins' docs and
// warnings say it: a string literal, to join with others.
#define CADENZA_VECTORIZED_KERNEL "the vectorized kernel (AVX-512F, or AVX2 with FMA and F16C)"

// y = x W^T + bias for W as panels (panel_weights.h: `panels` holds
// ceil(out / 64) panels [in, 64]): for each panel, combine_rows of the m rows
// of x (row i at x + i * x_stride) with the panel's rows, the panel
// prefetched as one stream; y row i at y + i * y_stride, columns [0, out).
// Only with a vectorized kernel (combine_rows_vectorized()).
void combine_panels(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                    const float* bias, float* y, int64_t y_stride);

// Narrow panels: the AVX2 kernel's float32 weights, ceil(out / 16) panels
// [in, 16] (PanelMatrix packs them so where narrow_panels_preferred()). Each
// k row of a panel is one 64-byte line, so up to six rows of x share one
// contiguous stream whose sums fit AVX2's 16 registers, where 64-wide panels
// need either several sweeps or a stride. The same sums, in the same order,
// as combine_panels over the same weights: the same bits. Only with the AVX2
// kernel.
constexpr int64_t narrow_panel_width = 16;
bool narrow_panels_preferred();
void combine_narrow_panels(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                           const float* bias, float* y, int64_t y_stride);

// combine_panels with the panels' weights in float16 (IEEE binary16), each
// converted to float32 as it is loaded: the same sums, in the same order, as
// combine_panels over those weights in float32. Only with a vectorized kernel.
void combine_half_panels(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in, int64_t out,
                         const float* bias, float* y, int64_t y_stride);

// The AVX-512 kernels (row_combinations_avx512.cpp), for CPUs with AVX-512F.
void combine_rows_avx512(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count,
                         int64_t b_stride, int64_t width, float* out, int64_t out_stride);
void combine_half_rows_avx512(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                              int64_t b_stride, int64_t width, float* out, int64_t out_stride);
void combine_panels_avx512(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                           float* y, int64_t y_stride);
void combine_half_panels_avx512(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in,
                                int64_t out, float* y, int64_t y_stride);


// The AVX2 kernels (row_combinations_avx2.cpp), for CPUs with AVX2, FMA and F16C.
void combine_rows_avx2(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count,
                       int64_t b_stride, int64_t width, float* out, int64_t out_stride);
void combine_half_rows_avx2(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                            int64_t b_stride, int64_t width, float* out, int64_t out_stride);
void combine_panels_avx2(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                         float* y, int64_t y_stride);
void combine_half_panels_avx2(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in,
                              int64_t out, float* y, int64_t y_stride);
void combine_narrow_panels_avx2(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in,
                                int64_t out, float* y, int64_t y_stride);

}  // namespace cadenza::llama
