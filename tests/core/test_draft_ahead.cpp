// [pipeline] draft_ahead: the next chain proposed on a second thread beside
// the target's pass. A seed repeats bit for bit whatever the timing, the
// continuations are used, and a pipeline it cannot serve
// is refused at the key. (That the output keeps the target's distribution
// is SpeculativeDistribution's.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "error.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

// The doubles' pipeline with draft_ahead on line 2 and `draft` (the
// drafter's extra lines) and `acceptor` tables.
std::unique_ptr<Engine> engine_with(const std::string& draft, const std::string& acceptor) {
    const std::string pipeline =
        "[pipeline]\ndraft_ahead = true\nseed = 1\nmax_audio_seconds = 1.0\n"
        "[sampling]\ntemperature = 0.9\n"
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = 80\n"
        "[draft]\nplugin = \"test.markov_drafter\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = 80\n"
        "noise = 0.3\n" + draft + "[acceptor]\n" + acceptor;
    return std::make_unique<Engine>(load_pipeline_config_string(pipeline, "ahead.toml", test::source_dir(),
                                                                {{test::test_plugin_dir("doubles"), "test", true}}));
}

std::vector<int32_t> prompt_of(Engine& engine) {
    std::vector<int32_t> prompt = engine.text_ids("Said again and again.");
    prompt.push_back(engine.backbone_info().audio_start_token);
    return prompt;
}

TEST(DraftAhead, ASeedRepeatsBitForBitAndTheContinuationsAreUsed) {
    for (const char* lent : {"true", "false"}) {  // rows in the host's buffer, or in the drafter's own tensor
        SCOPED_TRACE(std::string("lent_buffer = ") + lent);
        const auto engine = engine_with(std::string("depth = 4\nlent_buffer = ") + lent + "\n",
                                        "plugin = \"acceptor.exact\"\n");
        const std::vector<int32_t> prompt = prompt_of(*engine);
        const std::vector<int32_t> first = engine->continue_prompt(prompt, 7, 1.0);
        for (int run = 0; run < 5; ++run) EXPECT_EQ(engine->continue_prompt(prompt, 7, 1.0), first);
        EXPECT_NE(engine->continue_prompt(prompt, 8, 1.0), first);
        const DecodingStats& stats = engine->stats();
        EXPECT_GT(stats.draft_ahead_seconds, 0.0);
        EXPECT_GT(stats.continued_steps(), 0);
        // A step whose 4 drafts are all accepted leaves its bonus to the
        // continuation, and one that rejects a draft emits the correction
        // in its place: 4 tokens a step at most, where a kept bonus makes 5.
        EXPECT_GT(stats.mean_accepted_length(), 2.0);
        EXPECT_LE(stats.mean_accepted_length(), 4.0);
    }
}

TEST(DraftAhead, ADrafterThatReadsTheTargetsHiddenStatesIsRefusedAtTheKey) {
    try {
        engine_with("needs_hidden = true\nhidden_size = 8\n", "plugin = \"acceptor.exact\"\n");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
        EXPECT_NE(std::string(e.what()).find("ahead.toml:2:15: 'draft_ahead': drafter 'test.markov_drafter' reads "
                                             "the target's hidden states"),
                  std::string::npos)
            << e.what();
    }
}

TEST(DraftAhead, APipelineWithoutADrafterIsRefusedAtTheKey) {
    const std::string pipeline =
        "[pipeline]\ndraft_ahead = true\n"
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\n";
    try {
        Engine engine(load_pipeline_config_string(pipeline, "plain.toml", test::source_dir(),
                                                  {{test::test_plugin_dir("doubles"), "test", true}}));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("plain.toml:2:15: 'draft_ahead' needs a [draft] stage"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace cadenza
