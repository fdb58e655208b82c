// Digit-structured code embeddings: each code's row is its free row plus the
// vectors of its FSQ digits, least significant digit first.
#include <gtest/gtest.h>

#include "code_digit_embedding.h"
#include "error.h"

namespace cadenza::training {
namespace {

TEST(CodeDigitEmbedding, AddsTheVectorsOfEachCodesDigitsToItsRow) {
    CodeDigitEmbedding digits({4, 3, 2}, 5, 24, 2, at::TensorOptions(at::kFloat));
    ASSERT_EQ(digits.digit_vectors().size(), 3u);
    {
        at::NoGradGuard no_grad;
        const at::Tensor values = at::arange(4, at::kFloat).unsqueeze(1).expand({4, 2});
        digits.digit_vectors()[0].copy_(values);                        // digit 0: v
        digits.digit_vectors()[1].copy_(values.slice(0, 0, 3) * 10);    // digit 1: 10 v
        digits.digit_vectors()[2].copy_(values.slice(0, 0, 2) * 100);   // digit 2: 100 v
    }
    const at::Tensor base = at::ones({32, 2});
    const at::Tensor table = digits.table(base);
    ASSERT_EQ(table.sizes(), (at::IntArrayRef{32, 2}));
    // Code 17 = 1 + 4 * (1 + 3 * 1): digits 1, 1, 1.
    EXPECT_FLOAT_EQ(table[5 + 17][0].item<float>(), 1 + 111);
    // Code 23 = 3 + 4 * (2 + 3 * 1): digits 3, 2, 1.
    EXPECT_FLOAT_EQ(table[5 + 23][1].item<float>(), 1 + 123);
    EXPECT_FLOAT_EQ(table[5][0].item<float>(), 1);  // code 0: all digits 0
    // Rows outside the codes are the base's.
    EXPECT_TRUE(table.slice(0, 0, 5).equal(base.slice(0, 0, 5)));
    EXPECT_TRUE(table.slice(0, 29).equal(base.slice(0, 29)));
    EXPECT_EQ(digits.describe(), "4,3,2 from token 5");
}

TEST(CodeDigitEmbedding, RefusesLevelsThatDoNotMakeTheCodes) {
    try {
        CodeDigitEmbedding({4, 3}, 0, 24, 2, at::TensorOptions(at::kFloat));
        FAIL() << "4 x 3 levels accepted for 24 codes";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("make 12 codes, the layout has 24"), std::string::npos) << e.what();
    }
    EXPECT_THROW(CodeDigitEmbedding({24, 1}, 0, 24, 2, at::TensorOptions(at::kFloat)), Error);
}

}  // namespace
}  // namespace cadenza::training
