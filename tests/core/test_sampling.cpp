// Sampling and the seeded random stream.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "error.h"
#include "random_stream.h"
#include "sampling.h"

namespace cadenza {
namespace {

cdz_sampling settings(double temperature, int64_t top_k = 0, double top_p = 1.0) {
    return cdz_sampling{sizeof(cdz_sampling), temperature, top_k, top_p};
}

TEST(Sampling, TemperatureZeroIsOneHotAtTheArgmax) {
    const std::vector<float> logits{0.5f, 2.0f, -1.0f, 2.0f};
    std::vector<float> p(4);
    sampling_probabilities(settings(0.0), logits.data(), p.data(), 4);
    EXPECT_EQ(p, (std::vector<float>{0, 1, 0, 0}));
}

TEST(Sampling, TemperatureOneIsTheSoftmax) {
    const std::vector<float> logits{0.0f, std::log(3.0f)};
    std::vector<float> p(2);
    sampling_probabilities(settings(1.0), logits.data(), p.data(), 2);
    EXPECT_NEAR(p[0], 0.25, 1e-6);
    EXPECT_NEAR(p[1], 0.75, 1e-6);
}

TEST(Sampling, TopKAndTopPKeepTheMostLikelyAndRenormalize) {
    const std::vector<float> logits{std::log(0.1f), std::log(0.4f), std::log(0.3f), std::log(0.2f)};
    std::vector<float> p(4);
    sampling_probabilities(settings(1.0, 2), logits.data(), p.data(), 4);
    EXPECT_NEAR(p[1], 0.4 / 0.7, 1e-6);
    EXPECT_NEAR(p[2], 0.3 / 0.7, 1e-6);
    EXPECT_EQ(p[0], 0.0f);
    EXPECT_EQ(p[3], 0.0f);
    sampling_probabilities(settings(1.0, 0, 0.75), logits.data(), p.data(), 4);  // 0.4 + 0.3 + 0.2 >= 0.75
    EXPECT_EQ(p[0], 0.0f);
    EXPECT_NEAR(p[1] + p[2] + p[3], 1.0, 1e-6);
    EXPECT_NEAR(p[3], 0.2 / 0.9, 1e-6);
}

TEST(Sampling, InvalidSettingsAreErrors) {
    std::vector<float> logits{0, 0}, p(2);
    EXPECT_THROW(sampling_probabilities(settings(-1.0), logits.data(), p.data(), 2), Error);
    EXPECT_THROW(sampling_probabilities(settings(1.0, 0, 0.0), logits.data(), p.data(), 2), Error);
}

TEST(RandomStream, OneSeedGivesOneSequenceAndStagesDiffer) {
    cdz_rng a{}, b{};
    random_stream_seed(a, 123);
    random_stream_seed(b, 123);
    for (int i = 0; i < 100; ++i) EXPECT_EQ(random_stream_next(a), random_stream_next(b));
    EXPECT_NE(derive_stream_seed(1, "draft"), derive_stream_seed(1, "acceptor"));
    EXPECT_NE(derive_stream_seed(1, "draft"), derive_stream_seed(2, "draft"));
}

TEST(RandomStream, UniformsAreInTheUnitIntervalWithTheRightMean) {
    cdz_rng rng{};
    random_stream_seed(rng, 9);
    double sum = 0;
    for (int i = 0; i < 100000; ++i) {
        const double u = random_stream_uniform(rng);
        ASSERT_GE(u, 0.0);
        ASSERT_LT(u, 1.0);
        sum += u;
    }
    EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(SampleIndex, FrequenciesFollowTheDistribution) {
    cdz_rng rng{};
    random_stream_seed(rng, 5);
    const std::vector<float> p{0.5f, 0.0f, 0.3f, 0.2f};
    std::vector<int> counts(4, 0);
    const int draws = 200000;
    for (int i = 0; i < draws; ++i) ++counts[sample_index(rng, p.data(), 4)];
    EXPECT_EQ(counts[1], 0);
    // Chi-square with 2 degrees of freedom over the non-zero cells; 13.8 is p = 0.001.
    double chi2 = 0;
    for (int k : {0, 2, 3}) {
        const double expected = p[k] * draws;
        chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
    }
    EXPECT_LT(chi2, 13.8);
}

}  // namespace
}  // namespace cadenza
