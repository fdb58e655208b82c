// combine_rows (row_combinations.h) against sums in double: every row count
// the kernel splits into blocks of six, widths around its 16- and 64-column
// pieces, strides wider than the rows, and nothing written outside them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "row_combinations.h"
#include "small_matmul.h"

namespace cadenza::llama {
namespace {

using Combine = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t);

// The largest error of `combine` against double sums, relative to the
// terms' magnitude; -1 when it wrote outside its rows.
double worst_error(Combine combine, int64_t rows, int64_t count, int64_t width, std::mt19937& random) {
    std::normal_distribution<float> normal;
    const int64_t a_stride = count + 3, b_stride = width + 5, out_stride = width + 7;
    std::vector<float> a(static_cast<size_t>(rows * a_stride)), b(static_cast<size_t>(count * b_stride));
    for (float& value : a) value = normal(random);
    for (float& value : b) value = normal(random);
    constexpr float untouched = 12345.0f;
    std::vector<float> out(static_cast<size_t>(rows * out_stride), untouched);
    combine(a.data(), rows, a_stride, b.data(), count, b_stride, width, out.data(), out_stride);
    double worst = 0.0;
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < width; ++j) {
            double sum = 0.0, magnitude = 0.0;
            for (int64_t k = 0; k < count; ++k) {
                const double term = static_cast<double>(a[r * a_stride + k]) * b[k * b_stride + j];
                sum += term;
                magnitude += std::fabs(term);
            }
            worst = std::max(worst, std::fabs(out[r * out_stride + j] - sum) / (magnitude + 1e-30));
        }
        for (int64_t j = width; j < out_stride; ++j)
            if (out[r * out_stride + j] != untouched) return -1.0;
    }
    return worst;
}

void expect_exact_sums(Combine combine) {
    std::mt19937 random(7);
    for (int64_t rows = 1; rows <= 13; ++rows)
        for (int64_t width : {1, 15, 16, 17, 48, 63, 64, 65, 130, 300})
            for (int64_t count : {1, 7, 64}) {
                const double error = worst_error(combine, rows, count, width, random);
                EXPECT_GE(error, 0.0) << "wrote outside its rows: rows " << rows << ", width " << width;
                EXPECT_LT(error, 1e-5) << "rows " << rows << ", width " << width << ", count " << count;
            }
}

TEST(RowCombinations, TheDispatchedPathSumsEveryShape) { expect_exact_sums(combine_rows); }

TEST(RowCombinations, TheAvx512KernelSumsEveryShape) {
    if (!kernel_supported(MatmulKernel::avx512)) GTEST_SKIP() << "this CPU has no AVX-512F";
    expect_exact_sums(combine_rows_avx512);
}

}  // namespace
}  // namespace cadenza::llama
