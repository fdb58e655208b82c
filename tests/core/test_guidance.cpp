// Classifier-free guidance in the decoding loop: a second backbone session
// decodes the same tokens after the null text and the loop extrapolates the
// logits away from it. On the test doubles: guidance changes what greedy
// decoding emits, and speculative decoding with exact acceptance emits what
// plain guided decoding emits (the null-text session follows every commit).
#include <gtest/gtest.h>

#include "diagnostic.h"
#include "engine.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

std::string guided_pipeline(double scale, bool speculative) {
    std::string text = "[pipeline]\nseed = 5\nmax_audio_seconds = 2.0\n"
                       "[sampling]\ntemperature = 0.0\nguidance_scale = " + std::to_string(scale) + "\n"
                       "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
                       "[codec]\nplugin = \"test.tone_codec\"\n"
                       "[backbone]\nplugin = \"test.markov_backbone\"\nend_after = 40\ncontext_weight = 2.0\n";
    if (speculative)
        text += "[draft]\nplugin = \"test.markov_drafter\"\nend_after = 40\nnoise = 0.5\ndepth = 3\nbranching = 2\n"
                "[acceptor]\nplugin = \"acceptor.exact\"\n";
    return text;
}

std::vector<float> synthesize(const std::string& pipeline, DecodingStats* stats = nullptr) {
    Engine engine(load_pipeline_config_string(pipeline, "guidance.toml", test::source_dir(),
                                              {{test::test_plugin_dir("doubles"), "test", true}}));
    SynthesisRequest request;
    request.text = "Guided by the text.";
    std::vector<float> audio = engine.synthesize(request);
    if (stats) *stats = engine.stats();
    return audio;
}

TEST(Guidance, ChangesWhatGreedyDecodingEmits) {
    const auto plain = synthesize(guided_pipeline(1.0, false));
    const auto guided = synthesize(guided_pipeline(3.0, false));
    ASSERT_FALSE(plain.empty());
    ASSERT_FALSE(guided.empty());
    EXPECT_NE(plain, guided);
    EXPECT_EQ(synthesize(guided_pipeline(3.0, false)), guided);  // repeats
}

TEST(Guidance, SpeculativeExactDecodingEmitsWhatGuidedDecodingEmits) {
    DecodingStats stats;
    const auto plain = synthesize(guided_pipeline(3.0, false));
    const auto speculative = synthesize(guided_pipeline(3.0, true), &stats);
    EXPECT_EQ(speculative, plain);
    EXPECT_LT(stats.steps(), stats.tokens_generated());  // drafts were accepted, so trees were committed
}

TEST(Guidance, TheScaleIsValidated) {
    try {
        load_pipeline_config_string("[sampling]\nguidance_scale = 0.5\n", "guidance.toml", test::source_dir(),
                                    {{test::test_plugin_dir("doubles"), "test", true}});
        ADD_FAILURE() << "a guidance_scale below 1 was accepted";
    } catch (const ValidationError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1u);
        EXPECT_EQ(e.diagnostics()[0].line, 2u);
        EXPECT_NE(e.diagnostics()[0].message.find("guidance_scale"), std::string::npos) << e.what();
    }
    const auto config = load_pipeline_config_string("[sampling]\nguidance_scale = 2.5\n", "guidance.toml",
                                                    test::source_dir(), {});
    EXPECT_DOUBLE_EQ(config.guidance_scale, 2.5);
    EXPECT_NE(config.to_toml().find("guidance_scale = 2.5"), std::string::npos);
}

}  // namespace
}  // namespace cadenza
