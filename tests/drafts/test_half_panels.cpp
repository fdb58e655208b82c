// HalfPanels (drafts/common/half_panels.h): each weight is the nearest half
// (as c10::Half rounds it, ties to even, overflow to infinity); the product
// is each row's sum in column order of fused multiply-adds, the same floats
// on every path (AVX-512, AVX2, plain); shapes that leave a partial panel.
#include <gtest/gtest.h>

#include <c10/util/Half.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "half_panels.h"

namespace cadenza::drafts {
namespace {

TEST(HalfPanels, EachWeightIsItsNearestHalf) {
    std::vector<float> weights = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.0f, 65520.0f, -70000.0f,
                                  std::ldexp(1.0f, -24), std::ldexp(1.0f, -25), std::ldexp(3.0f, -25),
                                  std::ldexp(1.0f, -14), 1.0f + std::ldexp(1.0f, -11), 1.0f + std::ldexp(3.0f, -11),
                                  0.1f, -0.3333f, 2049.0f, std::numeric_limits<float>::infinity()};
    std::mt19937 generator(4);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    while (weights.size() < 3 * 37) weights.push_back(normal(generator));
    const HalfPanels panels(weights.data(), 37, 3);
    for (int64_t r = 0; r < 37; ++r)
        for (int64_t c = 0; c < 3; ++c) {
            const float w = weights[static_cast<size_t>(r * 3 + c)];
            const float expected = static_cast<float>(c10::Half(w));
            EXPECT_EQ(panels.at(r, c), expected) << "weight " << w;
        }
    EXPECT_EQ(panels.bytes(), 3 * 3 * 16 * 2);  // three panels of 16 rows
}

TEST(HalfPanels, EveryPathGivesThePlainPathsFloats) {
    std::mt19937 generator(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{512, 512}, {256, 512}, {37, 5}, {80, 3}, {1, 1}}) {
        std::vector<float> weight(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(cols)), bias(static_cast<size_t>(rows));
        for (float& v : weight) v = normal(generator) * 0.05f;
        for (float& v : x) v = normal(generator);
        for (float& v : bias) v = normal(generator);
        const HalfPanels panels(weight.data(), rows, cols);
        for (const float* b : {static_cast<const float*>(nullptr), static_cast<const float*>(bias.data())}) {
            std::vector<float> fast(static_cast<size_t>(rows) + 1, -7.0f), plain(static_cast<size_t>(rows), 0.0f);
            panels.multiply(x.data(), b, fast.data());
            panels.multiply_plain(x.data(), b, plain.data());
            if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
                std::vector<float> avx2(static_cast<size_t>(rows));
                half_panels_avx2(panels.halves(), cols, rows, x.data(), b, avx2.data());
                EXPECT_EQ(avx2, plain) << rows << " x " << cols << ": the AVX2 path";
            }
            EXPECT_EQ(fast[static_cast<size_t>(rows)], -7.0f) << "wrote past the last row";
            for (int64_t r = 0; r < rows; ++r) {
                ASSERT_EQ(fast[static_cast<size_t>(r)], plain[static_cast<size_t>(r)]) << rows << " x " << cols << ", row " << r;
                double reference = b ? b[r] : 0.0;
                for (int64_t c = 0; c < cols; ++c) reference += static_cast<double>(panels.at(r, c)) * x[static_cast<size_t>(c)];
                EXPECT_NEAR(plain[static_cast<size_t>(r)], reference, 1e-4 * (1.0 + std::fabs(reference)));
            }
        }
    }
}

}  // namespace
}  // namespace cadenza::drafts
