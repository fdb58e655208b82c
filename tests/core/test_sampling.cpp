// Sampling and the seeded random stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "error.h"
#include "probability_row.h"
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

// The definition sampling_probabilities must match: the allowed logits'
// softmax at the temperature, sorted by probability (ties by the lower
// index), the first top_k kept, then the first whose cumulative share reaches
// top_p, renormalized. The sort is what the engine no longer does per token.
std::vector<float> sorted_nucleus_reference(const cdz_sampling& s, const std::vector<float>& logits) {
    const auto count = static_cast<int64_t>(logits.size());
    std::vector<double> p(logits.size(), 0.0);
    const auto allowed = [&](int64_t i) {
        return s.allowed_end <= 0 || (i >= s.allowed_begin && i < s.allowed_end) || i == s.allowed_extra;
    };
    double max_logit = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < count; ++i)
        if (allowed(i)) max_logit = std::max<double>(max_logit, logits[i]);
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i)
        if (allowed(i)) total += p[i] = std::exp((logits[i] - max_logit) / s.temperature);
    std::vector<int64_t> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] != p[b] ? p[a] > p[b] : a < b; });
    const int64_t keep_k = s.top_k > 0 && s.top_k < count ? s.top_k : count;
    int64_t kept = keep_k;
    double cumulative = 0.0;
    for (int64_t r = 0; r < keep_k && s.top_p < 1.0; ++r) {
        cumulative += p[order[r]] / total;
        if (cumulative >= s.top_p) {
            kept = r + 1;
            break;
        }
    }
    double kept_total = 0.0;
    for (int64_t r = 0; r < kept; ++r) kept_total += p[order[r]];
    std::vector<float> out(logits.size(), 0.0f);
    for (int64_t r = 0; r < kept; ++r) out[order[r]] = static_cast<float>(p[order[r]] / kept_total);
    return out;
}

TEST(Sampling, TopKAndTopPWithoutSortingMatchTheSortedDefinition) {
    std::mt19937 generator(7);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int> coarse(-4, 4);
    for (int trial = 0; trial < 400; ++trial) {
        const int64_t count = trial % 2 ? 8252 : 37;
        std::vector<float> logits(static_cast<size_t>(count));
        // Every third trial rounds the logits so that many probabilities tie.
        for (float& l : logits) l = trial % 3 == 0 ? static_cast<float>(coarse(generator)) : normal(generator);
        cdz_sampling s = settings(0.3 + 0.1 * (trial % 10), (trial % 5 == 0) ? 0 : 1 + trial % 70,
                                  (trial % 4 == 0) ? 1.0 : 0.5 + 0.12 * (trial % 4));
        if (trial % 7 == 0) s = restrict_sampling(s, count / 4, count - 3, 1);
        const std::vector<float> expected = sorted_nucleus_reference(s, logits);
        std::vector<float> p(logits.size());
        sampling_probabilities(s, logits.data(), p.data(), count);
        for (int64_t i = 0; i < count; ++i) {
            ASSERT_EQ(p[i] > 0.0f, expected[i] > 0.0f) << "trial " << trial << " token " << i;
            ASSERT_NEAR(p[i], expected[i], 2e-6 + 2e-5 * expected[i]) << "trial " << trial << " token " << i;
        }
    }
}

TEST(Sampling, TheNucleusOfATemperedDistributionIsSamplingsRule) {
    // keep_sampling_nucleus on softmax(logits / T) over the allowed tokens is
    // sampling_probabilities on the logits, for top-k, top-p and both.
    std::mt19937 random(5);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> logits(500);
    for (float& logit : logits) logit = normal(random);
    for (const auto& [top_k, top_p] : std::vector<std::pair<int64_t, double>>{{0, 0.9}, {40, 1.0}, {40, 0.5}}) {
        cdz_sampling s = restrict_sampling(settings(0.7, top_k, top_p), 20, 480, 3);
        cdz_sampling tempered_only = s;
        tempered_only.top_k = 0;
        tempered_only.top_p = 1.0;
        std::vector<float> expected(logits.size()), tempered(logits.size());
        sampling_probabilities(s, logits.data(), expected.data(), 500);
        sampling_probabilities(tempered_only, logits.data(), tempered.data(), 500);
        tempered[0] = 0.25f;  // outside the allowed tokens: ignored and zeroed
        keep_sampling_nucleus(s, tempered.data(), 500);
        for (size_t i = 0; i < logits.size(); ++i)
            EXPECT_NEAR(tempered[i], expected[i], 1e-6) << "top_k " << top_k << " top_p " << top_p << " token " << i;
    }
    std::vector<float> empty(4, 0.0f);
    EXPECT_THROW(keep_sampling_nucleus(settings(1.0, 0, 0.5), empty.data(), 4), Error);
}

TEST(SampleToken, DrawsWhatSampleIndexDrawsFromTheSamplingRow) {
    // The same token from the same uniform, peaked and flat rows, with and
    // without a nucleus, the extra token before the range or in row_sum's tail.
    std::mt19937 generator(11);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int> coarse(-4, 4);
    std::vector<float> p, scratch;
    for (int trial = 0; trial < 300; ++trial) {
        const int64_t count = trial % 3 == 2 ? 37 : 8252;
        std::vector<float> logits(static_cast<size_t>(count));
        for (float& l : logits) l = trial % 5 == 0 ? static_cast<float>(coarse(generator)) : normal(generator);
        const double temperature = trial % 11 == 0 ? 0.0 : 0.3 + 0.1 * (trial % 10);
        cdz_sampling s = settings(temperature, trial % 4 == 0 ? 1 + trial % 50 : 0, trial % 6 == 0 ? 1.0 : 0.9);
        if (trial % 2) s = restrict_sampling(s, 0, count - 2, count - 1);
        if (trial % 7 == 0) s = restrict_sampling(s, count / 4, count - 3, 1);
        p.resize(logits.size());
        sampling_probabilities(s, logits.data(), p.data(), count);
        for (uint64_t seed = 1; seed <= 25; ++seed) {
            cdz_rng from_row{}, from_logits{};
            random_stream_seed(from_row, seed);
            random_stream_seed(from_logits, seed);
            scratch.assign(logits.size(), -1.0f);
            const int64_t expected = sample_index(from_row, p.data(), count);
            ASSERT_EQ(sample_token(s, logits.data(), scratch.data(), count, from_logits), expected)
                << "trial " << trial << " seed " << seed;
            ASSERT_EQ(random_stream_next(from_logits), random_stream_next(from_row)) << "one uniform each";
        }
    }
    std::vector<float> bad{0.0f, std::numeric_limits<float>::quiet_NaN()};
    cdz_rng rng{};
    EXPECT_THROW(sample_token(settings(1.0, 0, 0.9), bad.data(), scratch.data(), 2, rng), Error);
}

TEST(Sampling, NonFiniteLogitsAreErrors) {
    std::vector<float> logits{0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f}, p(3);
    EXPECT_THROW(sampling_probabilities(settings(1.0, 0, 0.9), logits.data(), p.data(), 3), Error);
    logits = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    EXPECT_THROW(sampling_probabilities(settings(1.0), logits.data(), p.data(), 2), Error);
    // Greedy: every comparison with NaN is false, so NaN logits picked the
    // first token (the reliability issue's finding 9: 0 s of audio, OK).
    logits = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN(), 1.0f};
    EXPECT_THROW(sampling_probabilities(settings(0.0), logits.data(), p.data(), 3), Error);
    logits = {0.0f, std::numeric_limits<float>::infinity(), 1.0f};
    EXPECT_THROW(sampling_probabilities(settings(0.0), logits.data(), p.data(), 3), Error);
}

TEST(Sampling, InvalidSettingsAreErrors) {
    std::vector<float> logits{0, 0}, p(2);
    EXPECT_THROW(sampling_probabilities(settings(-1.0), logits.data(), p.data(), 2), Error);
    EXPECT_THROW(sampling_probabilities(settings(1.0, 0, 0.0), logits.data(), p.data(), 2), Error);
}

TEST(ProbabilityRow, ExponentialsAreWithinTwoUlpAndEdgesAreExact) {
    // Every row length, so that vector bodies and scalar tails both run.
    std::mt19937 generator(3);
    std::uniform_real_distribution<float> argument(-90.0f, 0.0f);
    for (int64_t count : {1, 3, 7, 8, 9, 31, 1000}) {
        std::vector<float> logits(static_cast<size_t>(count)), out(logits.size());
        for (float& l : logits) l = argument(generator);
        exponentiate_row(logits.data(), out.data(), count, 0.5f, 2.0f);
        for (int64_t i = 0; i < count; ++i) {
            const double x = (static_cast<double>(logits[i]) - 0.5) * 2.0;
            const float expected = static_cast<float>(std::exp(static_cast<double>((logits[i] - 0.5f) * 2.0f)));
            if (x < -87.0) {
                EXPECT_EQ(out[i], 0.0f) << x;
            } else {
                EXPECT_LE(std::abs(out[i] - expected), 2.0f * (std::nextafter(expected, 1.0f) - expected)) << x;
            }
        }
    }
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> edges{0.0f, -inf, nan, -1e30f, 88.0f}, out(edges.size());
    exponentiate_row(edges.data(), out.data(), 5, 0.0f, 1.0f);
    EXPECT_EQ(out[0], 1.0f);
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_TRUE(std::isnan(out[2]));
    EXPECT_EQ(out[3], 0.0f);
    EXPECT_NEAR(out[4] / std::exp(88.0), 1.0, 1e-6);
}

TEST(ProbabilityRow, MaximumSumAndValidityOverEveryLength) {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (int64_t count = 1; count <= 20; ++count) {
        std::vector<float> v(static_cast<size_t>(count));
        std::iota(v.begin(), v.end(), 1.0f);
        std::reverse(v.begin(), v.end());
        EXPECT_EQ(row_max(v.data(), count), static_cast<float>(count));
        EXPECT_EQ(row_sum(v.data(), count), count * (count + 1) / 2.0);
        EXPECT_TRUE(row_is_nonnegative_finite(v.data(), count));
        for (int64_t at = 0; at < count; ++at) {
            for (float bad : {-1.0f, inf, nan, -inf}) {
                std::vector<float> w = v;
                w[static_cast<size_t>(at)] = bad;
                EXPECT_FALSE(row_is_nonnegative_finite(w.data(), count)) << bad << " at " << at << " of " << count;
            }
            std::vector<float> w = v;
            w[static_cast<size_t>(at)] = -0.0f;
            EXPECT_TRUE(row_is_nonnegative_finite(w.data(), count));
            w[static_cast<size_t>(at)] = nan;  // the maximum skips a NaN
            EXPECT_EQ(row_max(w.data(), count), at == 0 && count == 1 ? -inf : static_cast<float>(at == 0 ? count - 1 : count));
        }
    }
    EXPECT_EQ(row_max(nullptr, 0), -inf);
    EXPECT_EQ(row_sum(nullptr, 0), 0.0);
}

TEST(ProbabilityRow, TheSparseSumIsTheDenseRowsSumBitForBit) {
    // Values across 30 orders of magnitude: any other order of additions
    // rounds differently.
    std::mt19937 generator(3);
    std::normal_distribution<float> exponent(0.0f, 12.0f);
    std::uniform_real_distribution<double> density(0.001, 0.6);
    for (int64_t count : {1, 5, 8, 9, 15, 37, 64, 1000, 8252}) {
        for (int trial = 0; trial < 40; ++trial) {
            std::vector<float> dense(static_cast<size_t>(count), 0.0f), values;
            std::vector<int64_t> indices;
            std::bernoulli_distribution kept(density(generator));
            for (int64_t i = 0; i < count; ++i) {
                if (!kept(generator)) continue;
                dense[static_cast<size_t>(i)] = std::exp2(exponent(generator));
                indices.push_back(i);
                values.push_back(dense[static_cast<size_t>(i)]);
            }
            ASSERT_EQ(sparse_row_sum(indices.data(), values.data(), static_cast<int64_t>(values.size()), count),
                      row_sum(dense.data(), count))
                << count << " entries, " << values.size() << " kept";
        }
    }
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
