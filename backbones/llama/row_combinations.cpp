#include "row_combinations.h"

#include <cstring>
#include <string>

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

enum class CombineKernel { plain, avx2, avx512 };

// The small-m matmul's choice (CADENZA_MATMUL_KERNEL included), AVX2's only
// with F16C for the float16 loads.
CombineKernel combine_kernel() {
    static const CombineKernel kernel = [] {
        const MatmulKernel matmul = best_matmul_kernel();
        if (matmul == MatmulKernel::avx512) return CombineKernel::avx512;
#if defined(__x86_64__) && defined(__GNUC__)
        if (matmul == MatmulKernel::avx2 && __builtin_cpu_supports("f16c")) return CombineKernel::avx2;
#endif
        return CombineKernel::plain;
    }();
    return kernel;
}

}  // namespace

bool combine_rows_vectorized() { return combine_kernel() != CombineKernel::plain; }

void combine_rows(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count, int64_t b_stride,
                  int64_t width, float* out, int64_t out_stride) {
    switch (combine_kernel()) {
        case CombineKernel::avx512:
            return combine_rows_avx512(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
        case CombineKernel::avx2:
            return combine_rows_avx2(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
        default:
            for (int64_t r = 0; r < rows; ++r)
                combine_row(a + r * a_stride, b, count, b_stride, width, out + r * out_stride);
    }
}

namespace {

// The panel kernels' bias, added after them.
void add_bias(const float* bias, int64_t m, int64_t out, float* y, int64_t y_stride) {
    if (bias)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t o = 0; o < out; ++o) y[i * y_stride + o] += bias[o];
}

// The panel kernels exist in AVX-512 and AVX2 only.
template <typename Weight>
using PanelKernel = void (*)(const float*, int64_t, int64_t, const Weight*, int64_t, int64_t, float*, int64_t);

template <typename Weight>
void combine_panels_with_bias(const char* name, PanelKernel<Weight> avx512, PanelKernel<Weight> avx2, const float* x,
                              int64_t m, int64_t x_stride, const Weight* panels, int64_t in, int64_t out,
                              const float* bias, float* y, int64_t y_stride) {
    const CombineKernel kernel = combine_kernel();
    if (kernel == CombineKernel::plain)
        throw sdk::Error(CDZ_STATUS_INTERNAL, std::string(name) + " needs the AVX-512 or the AVX2 kernel");
    (kernel == CombineKernel::avx512 ? avx512 : avx2)(x, m, x_stride, panels, in, out, y, y_stride);
    add_bias(bias, m, out, y, y_stride);
}

}  // namespace

void combine_panels(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                    const float* bias, float* y, int64_t y_stride) {
    combine_panels_with_bias<float>("combine_panels", &combine_panels_avx512, &combine_panels_avx2, x, m, x_stride,
                                    panels, in, out, bias, y, y_stride);
}

bool narrow_panels_preferred() { return combine_kernel() == CombineKernel::avx2; }

void combine_narrow_panels(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                           const float* bias, float* y, int64_t y_stride) {
    if (combine_kernel() != CombineKernel::avx2)
        throw sdk::Error(CDZ_STATUS_INTERNAL, "combine_narrow_panels needs the AVX2 kernel");
    combine_narrow_panels_avx2(x, m, x_stride, panels, in, out, y, y_stride);
    add_bias(bias, m, out, y, y_stride);
}

void combine_half_rows(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                       int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    switch (combine_kernel()) {
        case CombineKernel::avx512:
            return combine_half_rows_avx512(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
        case CombineKernel::avx2:
            return combine_half_rows_avx2(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
        default: throw sdk::Error(CDZ_STATUS_INTERNAL, "combine_half_rows needs the AVX-512 or the AVX2 kernel");
    }
}

void combine_half_panels(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in, int64_t out,
                         const float* bias, float* y, int64_t y_stride) {
    combine_panels_with_bias<uint16_t>("combine_half_panels", &combine_half_panels_avx512, &combine_half_panels_avx2,
                                       x, m, x_stride, panels, in, out, bias, y, y_stride);
}

}  // namespace cadenza::llama
