// combine_rows (row_combinations.h) against sums in double: every row count
// the kernel splits into blocks of six, widths around its 16- and 64-column
// pieces, strides wider than the rows, and nothing written outside them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

#include "cadenza/sdk/plugin_error.hpp"
#include "int8_panels.h"
#include "panel_weights.h"
#include "row_blocks.h"
#include "row_combinations.h"
#include "small_matmul.h"
#include "tiny_llama.h"
#include "weight_precision.h"

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

// combine_half_rows gives, to the bit, what combine_rows gives over b's
// entries rounded to float16, for every shape the kernel splits, and writes
// nothing outside its rows.
TEST(RowCombinations, HalfRowsEqualFloatRowsOfTheRoundedValues) {
    if (!combine_rows_vectorized()) GTEST_SKIP() << "the kernel needs AVX-512F or AVX2";
    std::mt19937 random(11);
    std::normal_distribution<float> normal;
    for (int64_t rows = 1; rows <= 13; ++rows)
        for (int64_t width : {1, 15, 16, 17, 48, 63, 64, 65, 130, 300})
            for (int64_t count : {1, 7, 64}) {
                const int64_t a_stride = count + 3, b_stride = width + 5, out_stride = width + 7;
                std::vector<float> a(static_cast<size_t>(rows * a_stride));
                for (float& value : a) value = normal(random);
                const at::Tensor b = at::randn({count, b_stride}).to(at::kHalf);
                const at::Tensor b_rounded = b.to(at::kFloat).contiguous();
                constexpr float untouched = 12345.0f;
                std::vector<float> from_half(static_cast<size_t>(rows * out_stride), untouched), from_float = from_half;
                combine_half_rows(a.data(), rows, a_stride, reinterpret_cast<const uint16_t*>(b.data_ptr<at::Half>()),
                                  count, b_stride, width, from_half.data(), out_stride);
                combine_rows(a.data(), rows, a_stride, b_rounded.data_ptr<float>(), count, b_stride, width,
                             from_float.data(), out_stride);
                ASSERT_EQ(from_half, from_float) << "rows " << rows << ", width " << width << ", count " << count;
            }
}

// The shapes the panel tests run: 1-13 rows of x (strided), partial last
// panels (masked and not), a weight and a bias at random.
struct PanelCase {
    int64_t out, in, m;
    at::Tensor weight, bias;  // [out, in], [out]
    std::vector<float> x;     // m rows of x_stride
    int64_t x_stride, y_stride;
};

template <class Body>
void for_each_panel_case(unsigned seed, Body body) {
    std::mt19937 random(seed);
    std::normal_distribution<float> normal;
    for (int64_t out : {1, 17, 48, 64, 100, 130})
        for (int64_t in : {1, 7, 64, 130})
            for (int64_t m = 1; m <= 13; ++m) {
                PanelCase c{out, in, m, at::randn({out, in}), at::randn({out}), {}, in + 2, out + 3};
                c.x.resize(static_cast<size_t>(m * c.x_stride));
                for (float& value : c.x) value = normal(random);
                body(c);
            }
}

constexpr float untouched = 12345.0f;

// combine_panels on matrices packed by PanelMatrix::pack against x W^T + b
// in double, and nothing written past a row's `out` columns.
TEST(RowCombinations, PanelsGiveTheMatrixProductForEveryShape) {
    if (!combine_rows_vectorized()) GTEST_SKIP() << "the panel kernel needs AVX-512F or AVX2";
    for_each_panel_case(3, [](const PanelCase& c) {
        const PanelMatrix panels = PanelMatrix::pack(c.weight);
        EXPECT_EQ(panels.narrow, narrow_panels_preferred());
        std::vector<float> y(static_cast<size_t>(c.m * c.y_stride), untouched);
        combine_panels(c.x.data(), c.m, c.x_stride, panels, c.bias.data_ptr<float>(), y.data(), c.y_stride);
        const float* w = c.weight.data_ptr<float>();
        double worst = 0.0;
        for (int64_t i = 0; i < c.m; ++i) {
            for (int64_t o = 0; o < c.out; ++o)
                worst = std::max(worst, relative_error(y[i * c.y_stride + o], c.bias.data_ptr<float>()[o],
                                                       &c.x[i * c.x_stride], 1, &w[o * c.in], 1, c.in));
            for (int64_t o = c.out; o < c.y_stride; ++o)
                EXPECT_EQ(y[i * c.y_stride + o], untouched) << "out " << c.out << ", in " << c.in << ", m " << c.m;
        }
        EXPECT_LT(worst, 1e-5) << "out " << c.out << ", in " << c.in << ", m " << c.m;
    });
}

// Panels of float16 weights give, to the bit, what float32 panels of the
// same weights rounded to float16 give, partial panels included, and write
// nothing past a row's `out` columns.
TEST(RowCombinations, HalfPanelsEqualFloatPanelsOfTheRoundedMatrix) {
    if (!combine_rows_vectorized()) GTEST_SKIP() << "the panel kernel needs AVX-512F or AVX2";
    for_each_panel_case(5, [](const PanelCase& c) {
        const PanelMatrix half = PanelMatrix::pack(c.weight, {}, PanelPrecision::float16);
        const PanelMatrix full = PanelMatrix::pack(c.weight.to(at::kHalf).to(at::kFloat));
        ASSERT_TRUE(half.half());
        ASSERT_FALSE(full.half());
        std::vector<float> from_half(static_cast<size_t>(c.m * c.y_stride), untouched), from_full = from_half;
        const float* bias = c.bias.data_ptr<float>();
        combine_panels(c.x.data(), c.m, c.x_stride, half, bias, from_half.data(), c.y_stride);
        combine_panels(c.x.data(), c.m, c.x_stride, full, bias, from_full.data(), c.y_stride);
        EXPECT_EQ(from_half, from_full) << "out " << c.out << ", in " << c.in << ", m " << c.m;
    });
}

// The float16 arena starts a huge page as the float32 one does, its panels
// each as PanelMatrix::pack alone packs them.
TEST(RowCombinations, HalfPanelsLieInOneArenaStartingAHugePage) {
    const LlamaWeights weights = LlamaWeights::random(test::tiny_llasa_config(), 5, at::kCPU);
    const PanelWeights packed = PanelWeights::pack(weights, PanelPrecision::float16);
    EXPECT_EQ(packed.arena.scalar_type(), at::kHalf);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.arena.data_ptr()) % (uintptr_t{2} << 20), 0u);
    EXPECT_TRUE(at::equal(packed.lm_head.panels, PanelMatrix::pack(weights.lm_head, {}, PanelPrecision::float16).panels));
    EXPECT_TRUE(at::equal(packed.layers.back().down_proj.panels,
                          PanelMatrix::pack(weights.layers.back().down_proj, {}, PanelPrecision::float16).panels));
}

// Int8 panels give x W^T + b with x's rows and W's outputs each rounded to
// 127 steps of its largest magnitude (rounding half to even, as the kernel's
// conversion does), the products summed exactly: against that sum in double
// to float's rounding, within the rounding's bound of float32's product, and
// nothing written past a row's `out` columns.
TEST(RowCombinations, Int8PanelsSumTheRoundedRowsAndWeightsExactly) {
    if (!combine_rows_vectorized() || !int8_panels_supported()) GTEST_SKIP() << "int8 panels need AVX-512 VNNI or AVX2";
    auto rounded = [](const float* values, int64_t count, std::vector<double>& out) {
        float amax = 0.0f;
        for (int64_t k = 0; k < count; ++k) amax = std::max(amax, std::fabs(values[k]));
        const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
        out.resize(static_cast<size_t>(count));
        for (int64_t k = 0; k < count; ++k)
            out[k] = std::min(127.0f, std::max(-127.0f, std::nearbyint(values[k] * (1.0f / step))));
        return static_cast<double>(step);
    };
    for_each_panel_case(9, [&](const PanelCase& c) {
        const PanelMatrix panels = PanelMatrix::pack(c.weight, {}, PanelPrecision::int8);
        ASSERT_TRUE(panels.int8());
        std::vector<float> y(static_cast<size_t>(c.m * c.y_stride), untouched);
        const float* bias = c.bias.data_ptr<float>();
        combine_panels(c.x.data(), c.m, c.x_stride, panels, bias, y.data(), c.y_stride);
        const float* w = c.weight.data_ptr<float>();
        std::vector<double> xq, wq;
        double worst = 0.0;
        for (int64_t i = 0; i < c.m; ++i) {
            const double x_step = rounded(&c.x[i * c.x_stride], c.in, xq);
            for (int64_t o = 0; o < c.out; ++o) {
                const double w_step = [&] {
                    // pack's step divides: amax / 127, the weights by it
                    float amax = 0.0f;
                    for (int64_t k = 0; k < c.in; ++k) amax = std::max(amax, std::fabs(w[o * c.in + k]));
                    const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
                    wq.resize(static_cast<size_t>(c.in));
                    for (int64_t k = 0; k < c.in; ++k)
                        wq[k] = std::min(127.0f, std::max(-127.0f, std::nearbyint(w[o * c.in + k] / step)));
                    return static_cast<double>(step);
                }();
                // the rounded sum, and how far rounding may take it from
                // float32's: each x off by at most half its step, each w by half its
                double sum = 0.0, exact = 0.0, magnitude = std::fabs(bias[o]), rounding = 0.0;
                for (int64_t k = 0; k < c.in; ++k) {
                    const double x = c.x[i * c.x_stride + k], weight = w[o * c.in + k];
                    sum += xq[k] * wq[k];
                    exact += x * weight;
                    magnitude += std::fabs(x * weight);
                    rounding += 0.5 * x_step * std::fabs(weight) + 0.5 * w_step * std::fabs(x) + 0.25 * x_step * w_step;
                }
                const double got = y[i * c.y_stride + o];
                worst = std::max(worst, std::fabs(got - (sum * x_step * w_step + bias[o])) / (magnitude + 1e-30));
                EXPECT_LE(std::fabs(got - (exact + bias[o])), rounding * 1.001 + 1e-6 * magnitude)
                    << "out " << c.out << ", in " << c.in << ", m " << c.m << ", row " << i << ", output " << o;
            }
            for (int64_t o = c.out; o < c.y_stride; ++o)
                EXPECT_EQ(y[i * c.y_stride + o], untouched) << "out " << c.out << ", in " << c.in << ", m " << c.m;
        }
        EXPECT_LT(worst, 1e-6) << "out " << c.out << ", in " << c.in << ", m " << c.m;
    });
}

// A prompt's rows go to AMX tiles in blocks of 16: the same bits as the
// VNNI kernel gives the same quantized rows, partial panels included, and
// the dispatched projection (tiles, then VNNI for the rest) equals VNNI's
// for every row.
TEST(RowCombinations, Int8TilesEqualTheVnniKernelToTheBit) {
    if (!combine_rows_vectorized() || !int8_panels_supported() || !amx_int8_supported())
        GTEST_SKIP() << "no AMX int8 tiles here";
    for (const int64_t out : {64, 130})
        for (const int64_t in : {64, 256}) {
            const int64_t m = 35, stride = in + 3;
            const PanelMatrix panels = PanelMatrix::pack(at::randn({out, in}), {}, PanelPrecision::int8);
            const at::Tensor x = at::randn({m, stride});
            std::vector<uint8_t> values(static_cast<size_t>(m * in));
            std::vector<float> scales(static_cast<size_t>(m));
            QuantizedRows rows{values.data(), in, scales.data()};
            quantize_rows_avx512(x.data_ptr<float>(), m, stride, in, rows);
            std::vector<float> vnni(static_cast<size_t>(m * (out + 1)), untouched), tiles = vnni, dispatched = vnni;
            combine_int8_panels_vnni(rows, m, panels.int8_panels, panels.int8_scales, panels.int8_sums, in, out,
                                     vnni.data(), out + 1);
            combine_int8_panels_amx(rows, 32, panels.int8_panels, panels.int8_scales, panels.int8_sums, in, out,
                                    tiles.data(), out + 1);
            combine_panels(x.data_ptr<float>(), m, stride, panels, nullptr, dispatched.data(), out + 1);
            EXPECT_TRUE(std::equal(vnni.begin(), vnni.begin() + 32 * (out + 1), tiles.begin()))
                << "out " << out << ", in " << in;
            EXPECT_EQ(vnni, dispatched) << "out " << out << ", in " << in;
            for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(tiles[i * (out + 1) + out], untouched);
        }
}

// The kernels this CPU runs (AVX-512F; AVX2 with FMA and F16C), each tried
// directly: both must give every output as one multiply-add per term, in
// order from zero, so that a machine of either kind computes the same bits.
struct CombineKernels {
    const char* name;
    void (*rows)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t);
    void (*half_rows)(const float*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, int64_t, float*, int64_t);
    void (*panels)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t);
    void (*half_panels)(const float*, int64_t, int64_t, const uint16_t*, int64_t, int64_t, float*, int64_t);
    // AVX2's alone: float32 panels 16 outputs wide.
    void (*narrow_panels)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float*, int64_t);
};

// An [out, in] matrix as ceil(out / columns) panels [in, columns], the last
// padded with zeros: the 64-wide layout the kernels' panels take, or the
// narrow one, whichever PanelMatrix::pack would choose on this CPU.
std::vector<float> panels_of_width(const at::Tensor& matrix, int64_t columns) {
    const int64_t out = matrix.size(0), in = matrix.size(1);
    std::vector<float> panels(static_cast<size_t>((out + columns - 1) / columns * in * columns), 0.0f);
    const float* w = matrix.data_ptr<float>();
    for (int64_t o = 0; o < out; ++o)
        for (int64_t k = 0; k < in; ++k) panels[(o / columns) * in * columns + k * columns + o % columns] = w[o * in + k];
    return panels;
}

std::vector<CombineKernels> kernels_here() {
    std::vector<CombineKernels> kernels;
    if (kernel_supported(MatmulKernel::avx512))
        kernels.push_back({"avx512", combine_rows_avx512, combine_half_rows_avx512, combine_panels_avx512,
                           combine_half_panels_avx512, nullptr});
    if (kernel_supported(MatmulKernel::avx2) && __builtin_cpu_supports("f16c"))
        kernels.push_back({"avx2", combine_rows_avx2, combine_half_rows_avx2, combine_panels_avx2,
                           combine_half_panels_avx2, combine_narrow_panels_avx2});
    return kernels;
}

// sum_k a[k * a_step] * b[k * b_step] by std::fma in order from zero.
float fma_in_order(const float* a, int64_t a_step, const float* b, int64_t b_step, int64_t count) {
    float sum = 0.0f;
    for (int64_t k = 0; k < count; ++k) sum = std::fma(a[k * a_step], b[k * b_step], sum);
    return sum;
}

TEST(RowCombinations, EveryKernelSumsEachOutputInOrderToTheBit) {
    const std::vector<CombineKernels> kernels = kernels_here();
    if (kernels.empty()) GTEST_SKIP() << "this CPU runs neither the AVX-512 nor the AVX2 kernel";
    std::mt19937 random(13);
    std::normal_distribution<float> normal;
    for (const CombineKernels& kernel : kernels)
        for (int64_t rows = 1; rows <= 13; ++rows)
            for (int64_t width : {1, 7, 8, 9, 16, 17, 33, 63, 64, 65, 130})
                // Beyond 64 terms the kernels take b a chunk of rows at a time.
                for (int64_t count : {1, 7, 64, 65, 200}) {
                    const int64_t a_stride = count + 3, b_stride = width + 5, out_stride = width + 7;
                    std::vector<float> a(static_cast<size_t>(rows * a_stride));
                    for (float& value : a) value = normal(random);
                    const at::Tensor b_half = at::randn({count, b_stride}).to(at::kHalf);
                    const at::Tensor b = b_half.to(at::kFloat).contiguous();
                    std::vector<float> from_float(static_cast<size_t>(rows * out_stride), untouched),
                        from_half = from_float, expected = from_float;
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t j = 0; j < width; ++j)
                            expected[r * out_stride + j] =
                                fma_in_order(&a[r * a_stride], 1, b.data_ptr<float>() + j, b_stride, count);
                    kernel.rows(a.data(), rows, a_stride, b.data_ptr<float>(), count, b_stride, width,
                                from_float.data(), out_stride);
                    kernel.half_rows(a.data(), rows, a_stride,
                                     reinterpret_cast<const uint16_t*>(b_half.data_ptr<at::Half>()), count, b_stride,
                                     width, from_half.data(), out_stride);
                    ASSERT_EQ(from_float, expected)
                        << kernel.name << ": rows " << rows << ", width " << width << ", count " << count;
                    ASSERT_EQ(from_half, expected)
                        << kernel.name << ", float16: rows " << rows << ", width " << width << ", count " << count;
                }
    for (const CombineKernels& kernel : kernels)
        for_each_panel_case(15, [&](const PanelCase& c) {
            const at::Tensor rounded = c.weight.to(at::kHalf).to(at::kFloat).contiguous();
            const std::vector<float> full = panels_of_width(rounded, PanelMatrix::width);
            const PanelMatrix half = PanelMatrix::pack(c.weight, {}, PanelPrecision::float16);
            std::vector<float> from_full(static_cast<size_t>(c.m * c.y_stride), untouched), from_half = from_full,
                                                                                          from_narrow = from_full,
                                                                                          expected = from_full;
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t o = 0; o < c.out; ++o)
                    expected[i * c.y_stride + o] =
                        fma_in_order(&c.x[i * c.x_stride], 1, rounded.data_ptr<float>() + o * c.in, 1, c.in);
            kernel.panels(c.x.data(), c.m, c.x_stride, full.data(), c.in, c.out, from_full.data(), c.y_stride);
            if (kernel.narrow_panels) {
                const std::vector<float> narrow = panels_of_width(rounded, PanelMatrix::narrow_width);
                kernel.narrow_panels(c.x.data(), c.m, c.x_stride, narrow.data(), c.in, c.out, from_narrow.data(),
                                     c.y_stride);
                ASSERT_EQ(from_narrow, expected)
                    << kernel.name << ", narrow: out " << c.out << ", in " << c.in << ", m " << c.m;
            }
            kernel.half_panels(c.x.data(), c.m, c.x_stride,
                               reinterpret_cast<const uint16_t*>(half.panels.data_ptr<at::Half>()), c.in, c.out,
                               from_half.data(), c.y_stride);
            ASSERT_EQ(from_full, expected) << kernel.name << ": out " << c.out << ", in " << c.in << ", m " << c.m;
            ASSERT_EQ(from_half, expected)
                << kernel.name << ", float16: out " << c.out << ", in " << c.in << ", m " << c.m;
        });
}

// The int8 kernels this CPU runs give, to the bit, the integer sums over
// the rounded rows and weights times the two steps: the bytes the rows round
// to (both quantizers), then each output's exact int32 sum, as a float,
// times (its step x the row's).
TEST(RowCombinations, EveryInt8KernelGivesTheExactSumsToTheBit) {
    using Quantize = void (*)(const float*, int64_t, int64_t, int64_t, QuantizedRows&);
    using Combine8 = std::function<void(const QuantizedRows&, int64_t, const PanelMatrix&, int64_t, int64_t, float*,
                                        int64_t)>;
    std::vector<std::tuple<const char*, Quantize, Combine8>> kernels;
    if (int8_panels_vnni_supported())
        kernels.emplace_back("vnni", quantize_rows_avx512,
                             [](const QuantizedRows& x, int64_t m, const PanelMatrix& w, int64_t in, int64_t out,
                                float* y, int64_t y_stride) {
                                 combine_int8_panels_vnni(x, m, w.int8_panels, w.int8_scales, w.int8_sums, in, out, y,
                                                          y_stride);
                             });
    if (__builtin_cpu_supports("avx2"))
        kernels.emplace_back("avx2", quantize_rows_avx2,
                             [](const QuantizedRows& x, int64_t m, const PanelMatrix& w, int64_t in, int64_t out,
                                float* y, int64_t y_stride) {
                                 combine_int8_panels_avx2(x, m, w.int8_panels, w.int8_scales, in, out, y, y_stride);
                             });
    if (kernels.empty()) GTEST_SKIP() << "this CPU runs neither int8 kernel";
    for (const auto& [name, quantize, combine] : kernels)
        for_each_panel_case(17, [&, name = name, quantize = quantize, combine = combine](const PanelCase& c) {
            const PanelMatrix panels = PanelMatrix::pack(c.weight, {}, PanelPrecision::int8);
            const int64_t stride = (c.in + 3) / 4 * 4;
            std::vector<uint8_t> values(static_cast<size_t>(c.m * stride));
            std::vector<float> scales(static_cast<size_t>(c.m));
            QuantizedRows rows{values.data(), stride, scales.data()};
            quantize(c.x.data(), c.m, c.x_stride, c.in, rows);
            for (int64_t i = 0; i < c.m; ++i) {
                const float* x = &c.x[i * c.x_stride];
                float amax = 0.0f;
                for (int64_t k = 0; k < c.in; ++k) amax = std::max(amax, std::fabs(x[k]));
                const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
                ASSERT_EQ(scales[i], step) << name << ": in " << c.in << ", row " << i;
                for (int64_t k = 0; k < stride; ++k) {
                    const float whole = k < c.in ? std::nearbyint(x[k] * (1.0f / step)) : 0.0f;
                    ASSERT_EQ(values[i * stride + k], static_cast<uint8_t>(std::clamp(whole, -127.0f, 127.0f) + 128))
                        << name << ": in " << c.in << ", row " << i << ", input " << k;
                }
            }
            std::vector<float> y(static_cast<size_t>(c.m * c.y_stride), untouched), expected = y;
            const int64_t groups = stride / 4;
            for (int64_t i = 0; i < c.m; ++i)
                for (int64_t o = 0; o < c.out; ++o) {
                    const int8_t* panel = panels.int8_panels + (o / 64) * groups * 256;
                    int32_t exact = 0;
                    for (int64_t k = 0; k < stride; ++k)
                        exact += (int32_t{values[i * stride + k]} - 128) * panel[(k / 4) * 256 + (o % 64) * 4 + k % 4];
                    expected[i * c.y_stride + o] = static_cast<float>(exact) * (panels.int8_scales[o] * scales[i]);
                }
            combine(rows, c.m, panels, c.in, c.out, y.data(), c.y_stride);
            ASSERT_EQ(y, expected) << name << ": out " << c.out << ", in " << c.in << ", m " << c.m;
        });
}

// The int8 arena starts a huge page, its panels each as PanelMatrix::pack
// alone packs them.
TEST(RowCombinations, Int8PanelsLieInOneArenaStartingAHugePage) {
    const LlamaWeights weights = LlamaWeights::random(test::tiny_llasa_config(), 5, at::kCPU);
    const PanelWeights packed = PanelWeights::pack(weights, PanelPrecision::int8);
    EXPECT_EQ(packed.arena.scalar_type(), at::kChar);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.arena.data_ptr()) % (uintptr_t{2} << 20), 0u);
    const PanelMatrix alone = PanelMatrix::pack(weights.lm_head, {}, PanelPrecision::int8);
    EXPECT_TRUE(at::equal(packed.lm_head.panels, alone.panels));
    EXPECT_TRUE(at::equal(packed.lm_head.scales, alone.scales));
    EXPECT_TRUE(at::equal(packed.lm_head.sums, alone.sums));
}

TEST(RowCombinations, WeightPrecisionNamesAreTheChoices) {
    EXPECT_EQ(panel_precision_named("int8"), PanelPrecision::int8);
    EXPECT_EQ(panel_precision_named("float16"), PanelPrecision::float16);
    EXPECT_EQ(panel_precision_named("float32"), PanelPrecision::float32);
    EXPECT_THROW(panel_precision_named("bfloat16"), cadenza::sdk::Error);
}

// PanelWeights::pack puts every matrix in one arena that starts a 2 MiB
// page, each exactly as PanelMatrix::pack alone packs it, none overlapping.
TEST(RowCombinations, EveryPanelLiesInOneArenaStartingAHugePage) {
    const LlamaWeights weights = LlamaWeights::random(test::tiny_llasa_config(), 5, at::kCPU);
    const PanelWeights packed = PanelWeights::pack(weights);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(packed.arena.data_ptr<float>()) % (uintptr_t{2} << 20), 0u);
    const float* arena = packed.arena.data_ptr<float>();
    const float* arena_end = arena + packed.arena.numel();
    std::vector<std::pair<const PanelMatrix*, const at::Tensor*>> matrices{{&packed.lm_head, &weights.lm_head}};
    for (size_t i = 0; i < weights.layers.size(); ++i) {
        const LayerWeights& l = weights.layers[i];
        const PanelLayer& p = packed.layers[i];
        matrices.insert(matrices.end(), {{&p.q_proj, &l.q_proj}, {&p.k_proj, &l.k_proj}, {&p.v_proj, &l.v_proj},
                                         {&p.o_proj, &l.o_proj}, {&p.gate_proj, &l.gate_proj},
                                         {&p.up_proj, &l.up_proj}, {&p.down_proj, &l.down_proj}});
    }
    int64_t floats = 0;
    std::vector<std::pair<const float*, const float*>> ranges;
    for (const auto& [panels, matrix] : matrices) {
        const PanelMatrix alone = PanelMatrix::pack(*matrix);
        EXPECT_TRUE(at::equal(panels->panels, alone.panels));
        EXPECT_EQ(panels->panels.numel(), PanelMatrix::size_for(matrix->size(0), matrix->size(1)));
        const float* begin = panels->data();
        EXPECT_TRUE(begin >= arena && begin + panels->panels.numel() <= arena_end);
        ranges.push_back({begin, begin + panels->panels.numel()});
        floats += panels->panels.numel();
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
    EXPECT_EQ(floats, packed.arena.numel());
}

TEST(RowBlocks, EvenBlocksTakeEveryRowOnceInTheFewestBlocksOfNearlyEqualSizes) {
    for (int64_t rows = 1; rows <= 40; ++rows) {
        std::vector<int64_t> sizes;
        int64_t next = 0;
        in_even_blocks_of<6>(rows, [&](auto block, int64_t first) {
            EXPECT_EQ(first, next) << rows << " rows";
            sizes.push_back(decltype(block)::value);
            next += decltype(block)::value;
        });
        EXPECT_EQ(next, rows);
        EXPECT_EQ(static_cast<int64_t>(sizes.size()), (rows + 5) / 6) << rows << " rows";
        const auto [smallest, largest] = std::minmax_element(sizes.begin(), sizes.end());
        EXPECT_LE(*largest, 6);
        EXPECT_LE(*largest - *smallest, 1) << rows << " rows";
    }
}

}  // namespace
}  // namespace cadenza::llama
