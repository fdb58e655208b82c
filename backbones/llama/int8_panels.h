// Projections over int8 panels (PanelPrecision::int8): each output's weights
// rounded to 127 steps of its largest magnitude, each row of x rounded the
// same way when the projection starts, and the products summed exactly in
// int32 by AVX-512 VNNI (vpdpbusd), or by AVX2 (vpmaddubsw, vpmaddwd) with the
// same bits, then scaled back. A quarter of float32's
// bytes per pass, for a copy of a model used as its own draft (QSpec-style
// self-speculation); the sums are not float32's, so a model in int8 is a
// different model.
//
// Layout: panel p holds outputs [64 p, 64 p + 64) as groups of 4 inputs,
// [ceil(in / 4), 64, 4] bytes, the inputs padded with zero weights to a
// multiple of 4; scales[o] is output o's step and sums[o] the sum of its
// int8 weights (a row's bytes are value + 128, so the kernel subtracts 128 x
// sums[o]).
#pragma once

#include <cstdint>
#include <vector>

namespace cadenza::llama {

// Rows of x rounded to int8 steps, stored as value + 128.
struct QuantizedRows {
    uint8_t* values = nullptr;  // row i at values + i * stride, padded with 128 (zero) to a multiple of 4
    int64_t stride = 0;
    float* scales = nullptr;  // row i's step: its largest magnitude / 127 (1 for a zero row)
};

// Whether this CPU runs a kernel: AVX-512 F, BW and VNNI, or AVX2.
bool int8_panels_supported();

// Whether it runs the VNNI kernel (combine_int8_panels takes it over AVX2's).
bool int8_panels_vnni_supported();

// y = x W^T + bias for W as int8 panels; throws if !int8_panels_supported().
void combine_int8_panels(const float* x, int64_t m, int64_t x_stride, const int8_t* panels, const float* w_scales,
                         const int32_t* w_sums, int64_t in, int64_t out, const float* bias, float* y,
                         int64_t y_stride);

// Whether this CPU and kernel give the process AMX's int8 tiles
// (combine_int8_panels then takes blocks of 16 rows on them).
bool amx_int8_supported();

// The kernels (int8_panels_vnni.cpp; int8_panels_avx2.cpp; int8_panels_amx.cpp:
// whole blocks of 16 rows, `in` a multiple of 64; all three the same bits,
// and both quantize_rows the same bytes).
void quantize_rows_avx512(const float* x, int64_t m, int64_t x_stride, int64_t in, QuantizedRows& out);
void combine_int8_panels_vnni(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                              const int32_t* w_sums, int64_t in, int64_t out, float* y, int64_t y_stride);
void quantize_rows_avx2(const float* x, int64_t m, int64_t x_stride, int64_t in, QuantizedRows& out);
void combine_int8_panels_avx2(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                              int64_t in, int64_t out, float* y, int64_t y_stride);
void combine_int8_panels_amx(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                             const int32_t* w_sums, int64_t in, int64_t out, float* y, int64_t y_stride);

}  // namespace cadenza::llama
