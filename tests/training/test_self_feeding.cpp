// Self-feeding: only fed target codes are replaced, each by the code sampled
// from the logits one position earlier, at about the asked rate, and the
// draw repeats for the same batch and seed.
#include <gtest/gtest.h>

#include "batch_sampler.h"
#include "tiny_training.h"
#include "self_feeding.h"

namespace cadenza::training {
namespace {

SelfFeeding feeding_of(double rate, uint64_t seed) {
    SelfFeeding feeding;
    feeding.rate = rate;
    feeding.code_offset = 10;
    feeding.code_count = 100;
    feeding.seed = seed;
    return feeding;
}

TEST(SelfFeeding, ReplacesFedTargetCodesWithTheModelsSamples) {
    const std::vector<TokenSequence> corpus = {tiny_speech_sequence(0), tiny_speech_sequence(5), tiny_speech_sequence(9)};
    std::vector<const TokenSequence*> sequences;
    for (const TokenSequence& sequence : corpus) sequences.push_back(&sequence);
    const Batch batch = BatchSampler(sequences, 3, 512, 1).at_step(0);
    const at::Tensor clean = batch.inputs();
    const int64_t rows = clean.size(0), time = clean.size(1);
    // The "model" is sure that after position t comes code 10 + (t * 13) % 100,
    // and gives the end token (not a code) even more.
    at::Tensor logits = at::zeros({rows, time, 112});
    for (int64_t t = 0; t < time; ++t) {
        logits.index_put_({at::indexing::Slice(), t, 10 + (t * 13) % 100}, 60.0);
        logits.index_put_({at::indexing::Slice(), t, 111}, 90.0);
    }

    EXPECT_TRUE(self_fed_inputs(clean, logits, batch, feeding_of(0, 1)).equal(clean));
    const at::Tensor fed = self_fed_inputs(clean, logits, batch, feeding_of(0.4, 1));
    ASSERT_EQ(fed.sizes(), clean.sizes());
    EXPECT_TRUE(fed.equal(self_fed_inputs(clean, logits, batch, feeding_of(0.4, 1))));   // repeats
    EXPECT_FALSE(fed.equal(self_fed_inputs(clean, logits, batch, feeding_of(0.4, 2))));  // another seed

    const at::Tensor trained = batch.trained.slice(1, 0, batch.time());
    const at::Tensor target_codes = trained & (clean >= 10) & (clean < 110);
    int64_t replaced = 0;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t t = 0; t < time; ++t) {
            const int64_t in = fed[r][t].item<int64_t>(), was = clean[r][t].item<int64_t>();
            if (in == was) continue;
            ASSERT_TRUE(target_codes[r][t].item<bool>()) << "row " << r << " position " << t << " is not a fed code";
            ASSERT_GT(t, 0);
            EXPECT_EQ(in, 10 + ((t - 1) * 13) % 100) << "not the sample from the position before";
            ++replaced;
        }
    // About 40% of the 600 target codes (a sample may equal the true code: ~1%).
    EXPECT_NEAR(static_cast<double>(replaced) / target_codes.sum().item<double>(), 0.4, 0.07);
}

}  // namespace
}  // namespace cadenza::training
