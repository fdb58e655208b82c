// The SEANet parts on their own, with random weights: the padding rules,
// output lengths over configuration variants (including inputs shorter
// than a kernel), and chunked decoding of causal decoders against whole
// decoding.
#include <gtest/gtest.h>

#include <ATen/ops/arange.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include "error.h"
#include "golden.h"
#include "padding.h"
#include "seanet_decoder.h"
#include "seanet_encoder.h"

namespace cadenza::seanet {
namespace {

TEST(SeanetPadding, ExtraPaddingCompletesTheLastWindow) {
    EXPECT_EQ(extra_padding_for_conv1d(36000, 4, 2, 2), 0);
    EXPECT_EQ(extra_padding_for_conv1d(5, 4, 2, 2), 1);
    EXPECT_EQ(extra_padding_for_conv1d(1, 16, 8, 8), 7);
    EXPECT_EQ(extra_padding_for_conv1d(100, 7, 1, 6), 0);
}

TEST(SeanetPadding, ReflectOnAnInputShorterThanThePadInsertsZerosFirst) {
    c10::InferenceMode inference;
    const at::Tensor x = at::arange(1, 4, at::kFloat).view({1, 1, 3});  // 1 2 3
    const at::Tensor padded = pad1d(x, 4, 0, PadMode::reflect);
    // [1 2 3 0 0] reflected by 4 on the left, then the two zeros cut off.
    const at::Tensor expected = at::tensor({0.f, 0.f, 3.f, 2.f, 1.f, 2.f, 3.f}).view({1, 1, 7});
    EXPECT_TRUE(padded.equal(expected)) << padded;
    EXPECT_TRUE(pad1d(x, 2, 1, PadMode::reflect).equal(at::tensor({3.f, 2.f, 1.f, 2.f, 3.f, 2.f}).view({1, 1, 6})));
    EXPECT_TRUE(unpad1d(padded, 2, 1).equal(padded.narrow(-1, 2, 4)));
}

SeanetConfig small_config(bool causal) {
    SeanetConfig config;
    config.channels = 1;
    config.dimension = 8;
    config.n_filters = 4;
    config.ratios = {4, 3, 2};
    config.causal = causal;
    return config;
}

struct Variant {
    const char* name;
    void (*apply)(SeanetConfig&);
};

const Variant variants[] = {
    {"defaults", [](SeanetConfig&) {}},
    {"two residual layers, true skip, compress 4",
     [](SeanetConfig& c) { c.n_residual_layers = 2, c.true_skip = true, c.compress = 4, c.dilation_base = 3; }},
    {"no LSTM, constant padding", [](SeanetConfig& c) { c.lstm = 0, c.pad_mode = PadMode::constant; }},
    {"one LSTM layer, plain convolutions, odd kernels",
     [](SeanetConfig& c) { c.lstm = 1, c.norm = ConvNorm::none, c.kernel_size = 5, c.last_kernel_size = 3; }},
    {"Snake, Tanh at the end, half the trim on the right",
     [](SeanetConfig& c) {
         c.activation.kind = ActivationKind::snake;
         c.final_activation = ActivationSpec{ActivationKind::tanh, 0.0};
         c.trim_right_ratio = c.causal ? 0.5 : 1.0;
         c.residual_kernel_size = 5;
     }},
};

// Each variant, causal and not, with the test body run inside a trace naming it.
template <typename Body>
void for_each_variant(Body&& body) {
    for (const Variant& variant : variants) {
        for (bool causal : {false, true}) {
            SCOPED_TRACE(std::string(variant.name) + (causal ? ", causal" : ", non-causal"));
            SeanetConfig config = small_config(causal);
            variant.apply(config);
            body(config);
        }
    }
}

TEST(SeanetVariants, EncodeRoundsFramesUpAndDecodeGivesHopSamplesPerFrame) {
    c10::InferenceMode inference;
    for_each_variant([](const SeanetConfig& c) {
        ParameterRecorder weights(7, c10::Device(c10::kCPU));
        const SeanetEncoder encoder(c, "encoder", weights);
        const SeanetDecoder decoder(c, "decoder", weights);
        for (int64_t length : {1, 5, 23, 24, 25, 100}) {
            const at::Tensor embeddings = encoder.forward(at::randn({2, 1, length}));
            const int64_t frames = (length + c.hop_length() - 1) / c.hop_length();
            ASSERT_EQ(embeddings.sizes(), (at::IntArrayRef{2, c.dimension, frames})) << "length " << length;
            EXPECT_TRUE(embeddings.isfinite().all().item<bool>());
            ASSERT_EQ(decoder.forward(embeddings).sizes(), (at::IntArrayRef{2, 1, frames * c.hop_length()}));
        }
    });
}

TEST(SeanetVariants, ACausalDecoderDecodesChunkByChunkAsAWhole) {
    c10::InferenceMode inference;
    for_each_variant([](const SeanetConfig& c) {
        ParameterRecorder weights(11, c10::Device(c10::kCPU));
        const SeanetDecoder decoder(c, "decoder", weights);
        if (!c.causal) {
            EXPECT_FALSE(decoder.can_stream());
            EXPECT_THROW(decoder.stream(), Error);
            return;
        }
        ASSERT_TRUE(decoder.can_stream());
        for (int64_t frames : {1, 2, 9}) {
            const at::Tensor embeddings = at::randn({1, c.dimension, frames});
            const at::Tensor whole = decoder.forward(embeddings);
            for (int64_t chunk : {1, 2, 4}) {
                auto stream = decoder.stream();
                at::Tensor streamed;
                for (int64_t start = 0; start < frames; start += chunk)
                    streamed = concat_time(streamed,
                                           stream->push(embeddings.narrow(2, start, std::min(chunk, frames - start))));
                streamed = concat_time(streamed, stream->flush());
                ASSERT_EQ(streamed.sizes(), whole.sizes()) << frames << " frames in chunks of " << chunk;
                EXPECT_LT(test::max_abs_difference(streamed, whole), 1e-5) << frames << " frames in chunks of " << chunk;
            }
        }
    });
}

TEST(SeanetConfigErrors, GroupNormCannotBeCausal) {
    SeanetConfig c = small_config(true);
    c.norm = ConvNorm::time_group_norm;
    EXPECT_THROW(c.validate("encoder"), Error);
}

}  // namespace
}  // namespace cadenza::seanet
