// Text dropout for classifier-free guidance: whole texts are nulled (their
// <bos> and <eos> kept, the symbols between them the frontend's <pad>),
// nothing else changes, about the asked fraction of texts is dropped, and the
// draw repeats for the same batch and seed.
#include <gtest/gtest.h>

#include "batch_sampler.h"
#include "tiny_training.h"
#include "text_dropout.h"

namespace cadenza::training {
namespace {

TextDropout dropout_of(double rate, uint64_t seed, int64_t pad_id = 0) {
    TextDropout dropout;
    dropout.pad_id = pad_id;
    dropout.rate = rate;
    dropout.text_offset = 0;
    dropout.text_count = 10;
    dropout.seed = seed;
    return dropout;
}

TEST(TextDropout, NullsWholeTextsAtTheAskedRate) {
    std::vector<TokenSequence> corpus;
    for (int32_t i = 0; i < 16; ++i) corpus.push_back(tiny_speech_sequence(i));
    std::vector<const TokenSequence*> sequences;
    for (const TokenSequence& sequence : corpus) sequences.push_back(&sequence);
    const Batch batch = BatchSampler(sequences, 64, 512, 1).at_step(0);
    const at::Tensor clean = batch.inputs();

    EXPECT_TRUE(drop_text(clean, batch, dropout_of(0, 1)).equal(clean));
    const at::Tensor dropped = drop_text(clean, batch, dropout_of(0.4, 1));
    ASSERT_EQ(dropped.sizes(), clean.sizes());
    EXPECT_TRUE(dropped.equal(drop_text(clean, batch, dropout_of(0.4, 1))));   // repeats
    EXPECT_FALSE(dropped.equal(drop_text(clean, batch, dropout_of(0.4, 2))));  // another seed, another draw

    int64_t nulled_rows = 0;
    for (int64_t r = 0; r < clean.size(0); ++r) {
        const at::Tensor row = clean[r], out = dropped[r];
        // Only the four symbols between <bos> and <eos> may change.
        EXPECT_TRUE(out.slice(0, 5).equal(row.slice(0, 5)));
        EXPECT_EQ(out[0].item<int64_t>(), 1);  // the first and last symbols stay
        EXPECT_EQ(out[5].item<int64_t>(), 6);
        const at::Tensor text = out.slice(0, 1, 5);
        if (text.equal(row.slice(0, 1, 5))) continue;
        EXPECT_TRUE(text.eq(0).all().item<bool>()) << "row " << r << " is partly nulled";
        ++nulled_rows;
    }
    EXPECT_GE(nulled_rows, 12);  // 40% of 64 rows: 25.6, sd 3.9
    EXPECT_LE(nulled_rows, 40);
}

TEST(TextDropout, TheNullTextIsTheFrontendsPad) {
    std::vector<TokenSequence> corpus;
    for (int32_t i = 0; i < 16; ++i) corpus.push_back(tiny_speech_sequence(i));
    std::vector<const TokenSequence*> sequences;
    for (const TokenSequence& sequence : corpus) sequences.push_back(&sequence);
    const Batch batch = BatchSampler(sequences, 64, 512, 1).at_step(0);
    const at::Tensor clean = batch.inputs();
    const at::Tensor at_zero = drop_text(clean, batch, dropout_of(0.4, 1));
    const at::Tensor at_seven = drop_text(clean, batch, dropout_of(0.4, 1, 7));  // the same draw, <pad> = 7
    int64_t nulled_rows = 0;
    for (int64_t r = 0; r < clean.size(0); ++r) {
        if (at_zero[r].equal(clean[r])) continue;
        EXPECT_TRUE(at_seven[r].slice(0, 1, 5).eq(7).all().item<bool>()) << "row " << r;
        ++nulled_rows;
    }
    EXPECT_GT(nulled_rows, 0);
}

}  // namespace
}  // namespace cadenza::training
