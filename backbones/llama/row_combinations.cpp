#include "row_combinations.h"

#include <cstring>

#include "cadenza/sdk/plugin_error.hpp"
#include "small_matmul.h"

namespace cadenza::llama {
namespace {

// One row of `a`: 64 columns at a time in a local accumulator the compiler
// keeps in registers (through `out` it would load and store them for every k).
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx2", "default")))
#endif
void combine_row(const float* a, const float* b, int64_t count, int64_t b_stride, int64_t width, float* out) {
    constexpr int64_t block = 64;
    int64_t first = 0;
    for (; first + block <= width; first += block) {
        float sum[block] = {};
        for (int64_t k = 0; k < count; ++k) {
            const float weight = a[k];
            const float* row = b + k * b_stride + first;
            for (int64_t j = 0; j < block; ++j) sum[j] += weight * row[j];
        }
        std::memcpy(out + first, sum, sizeof(sum));
    }
    for (; first < width; ++first) {
        float sum = 0.0f;
        for (int64_t k = 0; k < count; ++k) sum += a[k] * b[k * b_stride + first];
        out[first] = sum;
    }
}

}  // namespace

bool combine_rows_vectorized() {
    static const bool avx512 = best_matmul_kernel() == MatmulKernel::avx512;
    return avx512;
}

void combine_rows(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count, int64_t b_stride,
                  int64_t width, float* out, int64_t out_stride) {
    if (combine_rows_vectorized()) {
        combine_rows_avx512(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
        return;
    }
    for (int64_t r = 0; r < rows; ++r) combine_row(a + r * a_stride, b, count, b_stride, width, out + r * out_stride);
}

namespace {

void add_bias(const float* bias, int64_t m, int64_t out, float* y, int64_t y_stride) {
    if (bias)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t o = 0; o < out; ++o) y[i * y_stride + o] += bias[o];
}

}  // namespace

void combine_panels(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                    const float* bias, float* y, int64_t y_stride) {
    if (!combine_rows_vectorized())
        throw sdk::Error(CDZ_STATUS_INTERNAL, "combine_panels needs the AVX-512 kernel");
    combine_panels_avx512(x, m, x_stride, panels, in, out, y, y_stride);
    add_bias(bias, m, out, y, y_stride);
}

void combine_half_panels(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in, int64_t out,
                         const float* bias, float* y, int64_t y_stride) {
    if (!combine_rows_vectorized())
        throw sdk::Error(CDZ_STATUS_INTERNAL, "combine_half_panels needs the AVX-512 kernel");
    combine_half_panels_avx512(x, m, x_stride, panels, in, out, y, y_stride);
    add_bias(bias, m, out, y, y_stride);
}

}  // namespace cadenza::llama
