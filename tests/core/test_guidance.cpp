// Classifier-free guidance, a logits processor: a second backbone session
// decodes the same tokens after the null text and the logits are
// extrapolated away from it. On the test doubles: guidance changes what
// greedy decoding emits, speculative decoding with exact acceptance emits
// what plain guided decoding emits (the null-text session follows every
// commit), the null text is the frontend's <pad>, and a frontend without one
// is an error.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "diagnostic.h"
#include "engine.h"
#include "error.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

const char* const chars_vocabulary = "models/frontend/english_chars.vocab";

// Greedy decoding on the doubles, guided when scale > 0 (`logits` overrides
// the [logits] table).
std::string guided_pipeline(double scale, bool speculative, const std::string& vocabulary = chars_vocabulary,
                            const std::string& logits = "") {
    std::string text = "[pipeline]\nseed = 5\nmax_audio_seconds = 2.0\n[sampling]\ntemperature = 0.0\n";
    if (!logits.empty())
        text += logits;
    else if (scale > 0)
        text += "[logits]\nprocessors = [\"classifier_free_guidance\"]\n[logits.classifier_free_guidance]\nscale = " +
                std::to_string(scale) + "\n";
    text += "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"" + vocabulary + "\"\n"
            "[codec]\nplugin = \"test.tone_codec\"\n"
            "[backbone]\nplugin = \"test.markov_backbone\"\nend_after = 40\ncontext_weight = 2.0\n";
    if (speculative)
        text += "[draft]\nplugin = \"test.markov_drafter\"\nend_after = 40\nnoise = 0.5\ndepth = 3\nbranching = 2\n"
                "[acceptor]\nplugin = \"acceptor.exact\"\n";
    return text;
}

Engine engine_of(const std::string& pipeline) {
    return Engine(load_pipeline_config_string(pipeline, "guidance.toml", test::source_dir(),
                                              {{test::test_plugin_dir("doubles"), "test", true}}));
}

std::vector<float> synthesize(const std::string& pipeline, DecodingStats* stats = nullptr) {
    Engine engine = engine_of(pipeline);
    SynthesisRequest request;
    request.text = "Guided by the text.";
    std::vector<float> audio = engine.synthesize(request);
    if (stats) *stats = engine.stats();
    return audio;
}

// english_chars.vocab with its lines changed by `edit`, written to a fresh
// directory.
template <typename Edit>
std::string edited_vocabulary(const std::string& name, Edit edit) {
    std::ifstream in(test::source_dir() / chars_vocabulary);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    edit(lines);
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return test::write_file(test::fresh_directory("guidance_" + name), name + ".vocab", text).string();
}

TEST(Guidance, ChangesWhatGreedyDecodingEmits) {
    const auto plain = synthesize(guided_pipeline(0, false));
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

// A prompt whose text between <bos> and <eos> is all <pad> is its own null
// text, so guidance changes nothing (null + s * (text - null) = text when
// they are equal); with <pad> elsewhere the same prompt is guided. The null
// text follows the frontend's pad_id, not id 0.
TEST(Guidance, TheNullTextIsTheFrontendsPad) {
    // <pad> and 'a' (ids 0 and 5 in english_chars.vocab) trade places.
    const std::string moved_pad = edited_vocabulary("moved_pad", [](std::vector<std::string>& lines) {
        ASSERT_EQ(lines[0], "<pad>");
        ASSERT_EQ(lines[5], "a");
        std::swap(lines[0], lines[5]);
    });
    auto continuation = [](const std::string& pipeline) {
        Engine engine = engine_of(pipeline);
        EXPECT_EQ(engine.frontend_info().bos_id, 1);
        EXPECT_EQ(engine.frontend_info().eos_id, 2);
        const std::vector<int32_t> prompt = {1, 5, 5, 5, 2, engine.backbone_info().audio_start_token};
        return engine.continue_prompt(prompt, 5, 2.0);
    };
    const auto unguided = continuation(guided_pipeline(0, false, moved_pad));
    EXPECT_EQ(continuation(guided_pipeline(3.0, false, moved_pad)), unguided);  // pad 5: the prompt is null text
    EXPECT_NE(continuation(guided_pipeline(3.0, false)), unguided);            // pad 0: it is not
}

TEST(Guidance, AFrontendWithoutAPadIsAnError) {
    const std::string no_pad = edited_vocabulary("no_pad", [](std::vector<std::string>& lines) {
        ASSERT_EQ(lines[0], "<pad>");
        lines.erase(lines.begin());
    });
    EXPECT_NO_THROW(engine_of(guided_pipeline(0, false, no_pad)));  // unguided, the pad is not needed
    try {
        engine_of(guided_pipeline(3.0, false, no_pad));
        FAIL() << "guidance was accepted without a <pad>";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
        EXPECT_NE(std::string(e.what()).find("guidance.toml: [logits] classifier_free_guidance needs a frontend with "
                                             "a <pad> symbol (the null text's); frontend 'frontend.chars' has none"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Guidance, TheScaleIsValidated) {
    const std::string listed = "[logits]\nprocessors = [\"classifier_free_guidance\"]\n";
    try {
        load_pipeline_config_string(listed + "[logits.classifier_free_guidance]\nscale = 0.5\n", "guidance.toml",
                                    test::source_dir(), {});
        ADD_FAILURE() << "a scale below 1 was accepted";
    } catch (const ValidationError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1u);
        EXPECT_EQ(e.diagnostics()[0].line, 4u);
        EXPECT_NE(e.diagnostics()[0].message.find("'scale': value 0.5 is out of range [1, 20]"), std::string::npos)
            << e.what();
    }
    const auto config = load_pipeline_config_string(listed + "[logits.classifier_free_guidance]\nscale = 2.5\n",
                                                    "guidance.toml", test::source_dir(), {});
    ASSERT_EQ(config.logits_processors.size(), 1u);
    EXPECT_DOUBLE_EQ(config.logits_processors[0].params.values.at("scale").number, 2.5);
    EXPECT_NE(config.to_toml().find("[logits.classifier_free_guidance]\nscale = 2.5\n"), std::string::npos)
        << config.to_toml();
}

TEST(Guidance, TheScaleIsRequired) {
    try {
        load_pipeline_config_string("[logits]\nprocessors = [\"classifier_free_guidance\"]\n", "guidance.toml",
                                    test::source_dir(), {});
        ADD_FAILURE() << "guidance without a scale was accepted";
    } catch (const ValidationError& e) {
        ASSERT_EQ(e.diagnostics().size(), 1u);
        EXPECT_EQ(e.diagnostics()[0].to_string(),
                  "guidance.toml:2:15: missing required key 'scale' in [logits.classifier_free_guidance] for 'cadenza'");
    }
}

}  // namespace
}  // namespace cadenza
