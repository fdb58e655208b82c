// The small-m matmul kernels behind project(): every kernel this CPU runs
// equals at::linear within 1e-5 (relative to the largest output) on random
// shapes -- rows 1..16 and a few beyond, odd widths that leave partial
// vector pieces, with and without bias, strided rows of x, on one thread and
// on two -- and the reference path (at::mv / at::linear) and project()'s
// fallbacks give the same results. No timing here: see scripts/bench_backbone.sh.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "projection.h"
#include "small_matmul.h"

namespace cadenza {
namespace {

using llama::MatmulKernel;

// max |y - reference| / max(|reference|, 1e-30).
double relative_error(const at::Tensor& y, const at::Tensor& reference) {
    const double scale = std::max(reference.abs().max().item<double>(), 1e-30);
    return (y - reference).abs().max().item<double>() / scale;
}

at::Tensor random(std::vector<int64_t> shape, at::Generator& generator) {
    return at::normal(0.0, 1.0, shape, generator, at::TensorOptions().dtype(at::kFloat));
}

class SmallMatmul : public ::testing::TestWithParam<MatmulKernel> {
protected:
    void SetUp() override {
        if (!llama::kernel_supported(GetParam()))
            GTEST_SKIP() << llama::kernel_name(GetParam()) << " does not run on this CPU";
        threads_ = at::get_num_threads();
    }
    void TearDown() override {
        if (threads_ > 0) at::set_num_threads(threads_);
    }

    int threads_ = 0;
};

TEST_P(SmallMatmul, EqualsLinearOnRandomShapesWithAndWithoutBias) {
    auto generator = at::detail::createCPUGenerator(7);
    std::mt19937 pick(11);
    const std::vector<int64_t> widths{1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 257, 768};
    const std::vector<int64_t> outputs{1, 2, 5, 33, 130, 515};
    for (int threads : {1, 2}) {
        at::set_num_threads(threads);
        for (int64_t m = 1; m <= 16; ++m) {
            for (int trial = 0; trial < 6; ++trial) {
                const int64_t in = widths[pick() % widths.size()], out = outputs[pick() % outputs.size()];
                const at::Tensor x = random({m, in}, generator), weight = random({out, in}, generator);
                const at::Tensor bias = trial % 2 ? random({out}, generator) : at::Tensor();
                const at::Tensor y = llama::small_matmul(x, weight, bias, GetParam());
                ASSERT_EQ(y.sizes(), (at::IntArrayRef{m, out}));
                EXPECT_LT(relative_error(y, at::linear(x, weight, bias)), 1e-5)
                    << "m " << m << ", in " << in << ", out " << out << (bias.defined() ? ", bias" : "") << ", "
                    << threads << " thread(s)";
            }
        }
    }
}

TEST_P(SmallMatmul, ManyRowsGoInGroupsAndStillEqualLinear) {
    auto generator = at::detail::createCPUGenerator(8);
    at::set_num_threads(2);
    for (int64_t m : {9, 12, 17, 24, 32, 33}) {
        for (int64_t in : {19, 768}) {
            const at::Tensor x = random({m, in}, generator), weight = random({700, in}, generator);
            const at::Tensor bias = random({700}, generator);
            EXPECT_LT(relative_error(llama::small_matmul(x, weight, bias, GetParam()), at::linear(x, weight, bias)), 1e-5)
                << "m " << m << ", in " << in;
        }
    }
}

TEST_P(SmallMatmul, ReadsRowsOfXWithAStride) {
    auto generator = at::detail::createCPUGenerator(9);
    // Columns 3..3+in of a wider matrix: rows `in + 5` floats apart.
    const at::Tensor wide = random({5, 45}, generator);
    const at::Tensor x = wide.narrow(1, 3, 37);
    ASSERT_FALSE(x.is_contiguous());
    const at::Tensor weight = random({300, 37}, generator);
    EXPECT_TRUE(llama::small_matmul_applies(x, weight, {}));
    EXPECT_LT(relative_error(llama::small_matmul(x, weight, {}, GetParam()), at::linear(x, weight)), 1e-5);
}

TEST_P(SmallMatmul, LargeValuesKeepTheirRelativeAccuracy) {
    auto generator = at::detail::createCPUGenerator(10);
    const at::Tensor x = random({4, 2560}, generator) * 1e3, weight = random({64, 2560}, generator) * 1e-2;
    EXPECT_LT(relative_error(llama::small_matmul(x, weight, {}, GetParam()), at::linear(x, weight)), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Kernels, SmallMatmul, ::testing::Values(MatmulKernel::avx2, MatmulKernel::avx512),
                         [](const auto& info) { return std::string(llama::kernel_name(info.param)); });

TEST(SmallMatmulDispatch, TheReferencePathIsMvForOneRowAndLinearForMore) {
    auto generator = at::detail::createCPUGenerator(12);
    EXPECT_TRUE(llama::kernel_supported(MatmulKernel::reference));
    for (int64_t m : {1, 3}) {
        const at::Tensor x = random({m, 50}, generator), weight = random({20, 50}, generator);
        const at::Tensor bias = random({20}, generator);
        EXPECT_LT(relative_error(llama::small_matmul(x, weight, bias, MatmulKernel::reference), at::linear(x, weight, bias)),
                  1e-5);
        EXPECT_LT(relative_error(llama::small_matmul(x, weight, {}, MatmulKernel::reference), at::linear(x, weight)), 1e-5);
    }
}

TEST(SmallMatmulDispatch, TheRowsEntryWritesStridedRowsWithEveryKernelThatRunsHere) {
    auto generator = at::detail::createCPUGenerator(12);
    for (MatmulKernel kernel : {MatmulKernel::reference, MatmulKernel::avx2, MatmulKernel::avx512}) {
        if (!llama::kernel_supported(kernel)) continue;
        for (int64_t m : {1, 3, 11}) {
            // x rows 41 floats apart (37 used), y rows 90 apart (70 used), the rest untouched.
            const at::Tensor wide = random({m, 41}, generator), weight = random({70, 37}, generator);
            const at::Tensor bias = random({70}, generator);
            at::Tensor y = at::full({m, 90}, 7.0f);
            llama::small_matmul_rows(kernel, wide.data_ptr<float>(), m, 41, weight.data_ptr<float>(), 70, 37,
                                     bias.data_ptr<float>(), y.data_ptr<float>(), 90, /*split=*/m == 3);
            EXPECT_LT(relative_error(y.narrow(1, 0, 70), at::linear(wide.narrow(1, 0, 37), weight, bias)), 1e-5)
                << llama::kernel_name(kernel) << ", m " << m;
            EXPECT_TRUE(y.narrow(1, 70, 20).eq(7.0f).all().item<bool>()) << llama::kernel_name(kernel);
        }
    }
}

TEST(SmallMatmulDispatch, TheChosenKernelRunsHereAndUnsupportedOnesThrow) {
    EXPECT_TRUE(llama::kernel_supported(llama::best_matmul_kernel()));
    auto generator = at::detail::createCPUGenerator(13);
    const at::Tensor x = random({2, 16}, generator), weight = random({4, 16}, generator);
    for (MatmulKernel kernel : {MatmulKernel::avx2, MatmulKernel::avx512})
        if (!llama::kernel_supported(kernel)) EXPECT_THROW(llama::small_matmul(x, weight, {}, kernel), sdk::Error);
}

TEST(SmallMatmulDispatch, OperandsTheKernelsDoNotTakeAreRefused) {
    auto generator = at::detail::createCPUGenerator(14);
    const at::Tensor x = random({2, 16}, generator), weight = random({4, 16}, generator);
    EXPECT_TRUE(llama::small_matmul_applies(x, weight, {}));
    EXPECT_FALSE(llama::small_matmul_applies(x.to(at::kDouble), weight.to(at::kDouble), {}));
    EXPECT_FALSE(llama::small_matmul_applies(x, weight.t().contiguous().t(), {}));  // weight not contiguous
    EXPECT_FALSE(llama::small_matmul_applies(x.t().contiguous().t(), weight, {}));  // x column-major
    EXPECT_FALSE(llama::small_matmul_applies(x, weight, random({5}, generator)));    // bias of the wrong size
    EXPECT_FALSE(llama::small_matmul_applies(x.unsqueeze(0), weight, {}));
    const at::Tensor trained = weight.clone().set_requires_grad(true);
    EXPECT_FALSE(llama::small_matmul_applies(x, trained, {}));
    {
        at::NoGradGuard no_grad;
        EXPECT_TRUE(llama::small_matmul_applies(x, trained, {}));
    }
    const MatmulKernel best = llama::best_matmul_kernel();
    if (best != MatmulKernel::reference)
        EXPECT_THROW(llama::small_matmul(x.to(at::kDouble), weight.to(at::kDouble), {}, best), sdk::Error);
}

TEST(SmallMatmulDispatch, ProjectFallsBackWhereTheKernelsDoNotApply) {
    auto generator = at::detail::createCPUGenerator(15);
    // Few rows and many (the kernel where it runs), double (ATen), and a
    // weight that needs its gradient (autograd records at::linear).
    for (int64_t m : {1, 5, 300}) {
        const at::Tensor x = random({m, 40}, generator), weight = random({30, 40}, generator);
        const at::Tensor bias = random({30}, generator);
        EXPECT_LT(relative_error(llama::project(x, weight, bias), at::linear(x, weight, bias)), 1e-5) << "m " << m;
        const at::Tensor as_double = llama::project(x.to(at::kDouble), weight.to(at::kDouble), bias.to(at::kDouble));
        EXPECT_EQ(as_double.scalar_type(), at::kDouble);
        EXPECT_LT(relative_error(as_double.to(at::kFloat), at::linear(x, weight, bias)), 1e-5);
    }
    const at::Tensor x = random({3, 40}, generator);
    const at::Tensor weight = random({30, 40}, generator).set_requires_grad(true);
    const at::Tensor y = llama::project(x, weight);
    ASSERT_TRUE(y.requires_grad());
    y.sum().backward();
    ASSERT_TRUE(weight.grad().defined());
    EXPECT_LT(relative_error(weight.grad(), x.sum(0).expand({30, 40})), 1e-5);
}

}  // namespace
}  // namespace cadenza
