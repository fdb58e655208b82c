// The distribution a draft is trained and judged against under the
// pipeline's sampling (training/sampling_distribution.h) is the one the
// engine's sampler gives the acceptors (core/sampling.h).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "error.h"
#include "sampling.h"
#include "sampling_distribution.h"

namespace cadenza::training {
namespace {

std::vector<float> engine_row(const at::Tensor& logits, double temperature, double top_p) {
    cdz_sampling sampling{};
    sampling.struct_size = sizeof(cdz_sampling);
    sampling.temperature = temperature;
    sampling.top_p = top_p;
    sampling.allowed_extra = -1;
    const at::Tensor row = logits.contiguous();
    std::vector<float> out(static_cast<size_t>(row.numel()));
    sampling_probabilities(sampling, row.data_ptr<float>(), out.data(), row.numel());
    return out;
}

TEST(SamplingDistribution, EqualsTheEnginesSamplerOnRandomRows) {
    at::manual_seed(3);
    const at::Tensor logits = at::randn({40, 500}) * 3;
    for (const SamplingSettings settings : {SamplingSettings{1.0, 1.0}, SamplingSettings{0.7, 0.9},
                                            SamplingSettings{1.3, 0.5}, SamplingSettings{0.5, 0.95}}) {
        const at::Tensor mine = sampling_distribution(logits, settings);
        ASSERT_EQ(mine.sizes(), logits.sizes());
        int64_t kept_total = 0;
        for (int64_t r = 0; r < logits.size(0); ++r) {
            const std::vector<float> expected = engine_row(logits[r], settings.temperature, settings.top_p);
            const at::Tensor row = mine[r].contiguous();
            const float* got = row.data_ptr<float>();
            for (size_t t = 0; t < expected.size(); ++t) {
                ASSERT_EQ(got[t] > 0, expected[t] > 0) << describe(settings) << ", row " << r << ", token " << t;
                ASSERT_NEAR(got[t], expected[t], 1e-5) << describe(settings) << ", row " << r << ", token " << t;
                kept_total += got[t] > 0;
            }
        }
        if (settings.top_p < 1) EXPECT_LT(kept_total, logits.numel()) << describe(settings) << " cut nothing";
    }
}

TEST(SamplingDistribution, KeepsTheTokenThatCrossesTopP) {
    const at::Tensor p = at::tensor({0.5f, 0.3f, 0.15f, 0.05f});
    const at::Tensor kept = sampling_distribution(p.log(), {1.0, 0.7});
    EXPECT_NEAR(kept[0].item<float>(), 0.625f, 1e-6);
    EXPECT_NEAR(kept[1].item<float>(), 0.375f, 1e-6);
    EXPECT_EQ(kept[2].item<float>(), 0.0f);
    EXPECT_EQ(kept[3].item<float>(), 0.0f);
}

TEST(SamplingDistribution, RefusesSettingsOutOfRange) {
    const at::Tensor logits = at::zeros({2, 3});
    for (const SamplingSettings settings : {SamplingSettings{0.0, 1.0}, SamplingSettings{-1.0, 1.0},
                                            SamplingSettings{1.0, 0.0}, SamplingSettings{1.0, 1.5}}) {
        try {
            sampling_distribution(logits, settings);
            ADD_FAILURE() << describe(settings) << " was taken";
        } catch (const Error& error) {
            EXPECT_NE(std::string(error.what()).find("sampling"), std::string::npos) << error.what();
        }
    }
}

}  // namespace
}  // namespace cadenza::training
