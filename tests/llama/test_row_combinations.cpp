// combine_rows (row_combinations.h) against sums in double: every row count
// the kernel splits into blocks of six, widths around its 16- and 64-column
// pieces, strides wider than the rows, and nothing written outside them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "panel_weights.h"
#include "row_combinations.h"
#include "small_matmul.h"

namespace cadenza::llama {
namespace {

using Combine = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t);

// |got - (start + sum_k x[k * x_step] * w[k * w_step])| in double, relative
// to the magnitude of the terms.
double relative_error(float got, double start, const float* x, int64_t x_step, const float* w, int64_t w_step,
                      int64_t count) {
    double sum = start, magnitude = std::fabs(start);
    for (int64_t k = 0; k < count; ++k) {
        const double term = static_cast<double>(x[k * x_step]) * w[k * w_step];
        sum += term;
        magnitude += std::fabs(term);
    }
    return std::fabs(got - sum) / (magnitude + 1e-30);
}

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
        for (int64_t j = 0; j < width; ++j)
            worst = std::max(worst, relative_error(out[r * out_stride + j], 0.0, &a[r * a_stride], 1, &b[j],
                                                   b_stride, count));
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

// combine_panels on matrices packed by PanelMatrix::pack against x W^T + b
// in double: 1-13 rows of x, partial last panels (masked and not), and
// nothing written past a row's `out` columns.
TEST(RowCombinations, PanelsGiveTheMatrixProductForEveryShape) {
    if (!combine_rows_vectorized()) GTEST_SKIP() << "the panel kernel needs AVX-512F";
    std::mt19937 random(3);
    std::normal_distribution<float> normal;
    for (int64_t out : {1, 17, 48, 64, 100, 130})
        for (int64_t in : {1, 7, 64})
            for (int64_t m = 1; m <= 13; ++m) {
                const at::Tensor weight = at::randn({out, in});
                const at::Tensor bias = at::randn({out});
                const PanelMatrix panels = PanelMatrix::pack(weight);
                const int64_t x_stride = in + 2, y_stride = out + 3;
                std::vector<float> x(static_cast<size_t>(m * x_stride));
                for (float& value : x) value = normal(random);
                constexpr float untouched = 12345.0f;
                std::vector<float> y(static_cast<size_t>(m * y_stride), untouched);
                combine_panels(x.data(), m, x_stride, panels.data(), in, out, bias.data_ptr<float>(), y.data(),
                               y_stride);
                const float* w = weight.data_ptr<float>();
                double worst = 0.0;
                for (int64_t i = 0; i < m; ++i) {
                    for (int64_t o = 0; o < out; ++o)
                        worst = std::max(worst, relative_error(y[i * y_stride + o], bias.data_ptr<float>()[o],
                                                               &x[i * x_stride], 1, &w[o * in], 1, in));
                    for (int64_t o = out; o < y_stride; ++o)
                        EXPECT_EQ(y[i * y_stride + o], untouched) << "out " << out << ", in " << in << ", m " << m;
                }
                EXPECT_LT(worst, 1e-5) << "out " << out << ", in " << in << ", m " << m;
            }
}

}  // namespace
}  // namespace cadenza::llama
