// Noise on the fed target codes: only target codes change, the draw repeats
// for the same batch and seed, and its rate is what was asked.
#include <gtest/gtest.h>

#include "batch_sampler.h"
#include "tiny_training.h"
#include "code_input_noise.h"

namespace cadenza::training {
namespace {

CodeInputNoise noise_of(double rate, uint64_t seed) {
    CodeInputNoise noise;
    noise.rate = rate;
    noise.code_offset = 10;
    noise.code_count = 100;
    noise.seed = seed;
    return noise;
}

TEST(CodeInputNoise, ReplacesOnlyFedTargetCodesAtTheAskedRate) {
    const std::vector<TokenSequence> corpus = {tiny_speech_sequence(0), tiny_speech_sequence(5), tiny_speech_sequence(9)};
    std::vector<const TokenSequence*> sequences;
    for (const TokenSequence& sequence : corpus) sequences.push_back(&sequence);
    const Batch batch = BatchSampler(sequences, 3, 512, 1).at_step(0);
    const at::Tensor clean = batch.inputs();

    EXPECT_TRUE(noisy_inputs(batch, noise_of(0, 1)).equal(clean));
    const at::Tensor noisy = noisy_inputs(batch, noise_of(0.3, 1));
    ASSERT_EQ(noisy.sizes(), clean.sizes());
    EXPECT_TRUE(noisy.equal(noisy_inputs(batch, noise_of(0.3, 1))));   // repeats
    EXPECT_FALSE(noisy.equal(noisy_inputs(batch, noise_of(0.3, 2))));  // another seed, another draw

    const at::Tensor trained = batch.trained.slice(1, 0, batch.time());
    const at::Tensor target_codes = trained & (clean >= 10) & (clean < 110);
    const at::Tensor changed = noisy != clean;
    // Text, prompt codes, start, end and padding are never touched.
    EXPECT_EQ((changed & ~target_codes).sum().item<int64_t>(), 0);
    // About 30% of the 600 target codes (a replacement may redraw the same code: 1%).
    const double rate = changed.sum().item<double>() / target_codes.sum().item<double>();
    EXPECT_NEAR(rate, 0.3 * 0.99, 0.06);
    // Replacements are codes.
    const at::Tensor replaced = noisy.masked_select(changed);
    EXPECT_TRUE(((replaced >= 10) & (replaced < 110)).all().item<bool>());
}

}  // namespace
}  // namespace cadenza::training
