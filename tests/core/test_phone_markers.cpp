// A backbone with phone markers emits text ids among its audio tokens (the
// phone it speaks next); the engine lets it, passes over them when it
// collects frames, and bounds them. On the test doubles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine.h"
#include "error.h"
#include "pipeline_config.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

struct Synthesis {
    std::vector<float> audio;
    DecodingStats stats;
    std::vector<int32_t> tokens;
    size_t frames() const { return static_cast<size_t>(std::lround(stats.audio_seconds * 50.0)); }
};

std::unique_ptr<Engine> marker_engine(bool phone_markers, int end_after, double seconds = 4.0, bool speculative = false,
                                      double temperature = 1.0, double max_phone_seconds = 0.0) {
    const std::string pipeline =
        "[pipeline]\nseed = 3\nmax_audio_seconds = " + std::to_string(seconds) + "\n"
        "[sampling]\ntemperature = " + std::to_string(temperature) +
        "\nmax_phone_seconds = " + std::to_string(max_phone_seconds) + "\n"
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = " +
        std::to_string(end_after) + "\nphone_markers = " + (phone_markers ? "true" : "false") + "\n" +
        (speculative ? "[draft]\nplugin = \"test.markov_drafter\"\ntext_tokens = 80\naudio_tokens = 32\n"
                       "phone_markers = true\nend_after = " + std::to_string(end_after) +
                           "\nnoise = 0.5\ndepth = 3\nbranching = 2\n[acceptor]\nplugin = \"acceptor.exact\"\n"
                     : std::string());
    return std::make_unique<Engine>(load_pipeline_config_string(pipeline, "markers.toml", test::source_dir(),
                                                                {{test::test_plugin_dir("doubles"), "test", true}}));
}

Synthesis synthesize(bool phone_markers, int end_after, double seconds = 4.0, bool speculative = false,
                     double temperature = 1.0, double max_phone_seconds = 0.0) {
    const auto engine = marker_engine(phone_markers, end_after, seconds, speculative, temperature, max_phone_seconds);
    SynthesisRequest request;
    request.text = "Marked phones.";
    Synthesis result;
    request.on_token = [&](int32_t token) { result.tokens.push_back(token); };
    result.audio = engine->synthesize(request);
    result.stats = engine->stats();
    return result;
}

TEST(PhoneMarkers, AreEmittedAmongTheAudioAndCarryNoAudio) {
    const Synthesis marked = synthesize(true, 40);
    ASSERT_FALSE(marked.audio.empty());
    EXPECT_EQ(marked.audio.size(), marked.frames() * 320);  // the tone codec: 320 samples per frame
    // Every emitted token but the end is a frame or a marker.
    EXPECT_GT(marked.stats.tokens_generated(), static_cast<int64_t>(marked.frames()) + 1);
    EXPECT_EQ(synthesize(true, 40).audio, marked.audio);  // a seed repeats

    const Synthesis plain = synthesize(false, 40);
    EXPECT_EQ(plain.stats.tokens_generated(), static_cast<int64_t>(plain.frames()) + 1);  // frames and the end
}

// The markers emitted, in order.
std::vector<int32_t> markers_of(const Synthesis& synthesis) {
    std::vector<int32_t> markers;
    for (int32_t token : synthesis.tokens)
        if (token < 80) markers.push_back(token);
    return markers;
}

TEST(PhoneMarkers, FollowTheTextInOrder) {
    // frontend.chars: "Marked phones." is <bos> m a r k e d <space> p h o n e s . <eos>; the
    // double, left to itself, would emit text ids at random.
    // One text id of 80 is allowed at a time, so markers are rare: a long synthesis.
    const Synthesis marked = synthesize(true, 300, 8.0);
    const std::vector<int32_t> markers = markers_of(marked);
    ASSERT_GE(markers.size(), 3u);
    const std::vector<int32_t> text = {17, 5, 22, 15, 9, 8, 4, 20, 12, 19, 18, 9, 23, 42};
    ASSERT_LE(markers.size(), text.size());
    EXPECT_EQ(markers, std::vector<int32_t>(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(markers.size())));
    // Greedy speculative decoding with exact acceptance emits what greedy
    // decoding emits: the drafts' wrong markers are rejected.
    const Synthesis greedy = synthesize(true, 300, 8.0, false, 0.0);
    EXPECT_GE(markers_of(greedy).size(), 2u);
    EXPECT_EQ(synthesize(true, 300, 8.0, true, 0.0).tokens, greedy.tokens);
}

TEST(PhoneMarkers, AreBoundedByTheText) {
    // A model that never ends: the frames stop at max_audio_seconds, the
    // markers at one per text symbol plus 16.
    const Synthesis endless = synthesize(true, 100000, 1.0);
    EXPECT_LE(endless.frames(), 50u);
    const int64_t text_ids = 14 + 2;  // "Marked phones." with <bos> and <eos>
    EXPECT_LE(endless.stats.tokens_generated(), 50 + text_ids + 16);
}

TEST(PhoneMarkers, APhoneEndsAfterMaxPhoneSeconds) {
    // A model that never ends and rarely places a marker: with phones of at
    // most 0.1 s (5 frames) every phone of the text is spoken, then the end
    // is forced; without the limit the frames run to max_audio_seconds.
    for (const bool speculative : {false, true}) {
        const Synthesis limited = synthesize(true, 100000, 8.0, speculative, 1.0, 0.1);
        const std::vector<int32_t> text = {17, 5, 22, 15, 9, 8, 4, 20, 12, 19, 18, 9, 23, 42};
        EXPECT_EQ(markers_of(limited), text);
        int longest = 0, run = 0;
        for (int32_t token : limited.tokens) {
            run = token < 80 ? 0 : run + 1;
            longest = std::max(longest, run);
        }
        EXPECT_LE(longest, 5 + 1);  // the last run holds the end token
        EXPECT_LE(limited.frames(), (text.size() + 1) * 5);
    }
    EXPECT_EQ(synthesize(true, 100000, 2.0).frames(), 100u);
}

TEST(PhoneMarkers, MaxPhoneSecondsNeedsAPhoneMarkerBackbone) {
    try {
        synthesize(false, 40, 4.0, false, 1.0, 0.3);
        FAIL() << "expected a configuration error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
        EXPECT_NE(std::string(e.what()).find("max_phone_seconds"), std::string::npos) << e.what();
    }
}

// Self-distillation corpora: continuing a token prompt samples what a
// synthesis of the same text samples (same loop, markers and seed use).
TEST(ContinuePrompt, SamplesWhatASynthesisOfTheSameTextSamples) {
    for (const bool speculative : {false, true}) {
        const Synthesis synthesis = synthesize(true, 60, 4.0, speculative);
        const auto engine = marker_engine(true, 60, 4.0, speculative);
        std::vector<int32_t> prompt = engine->text_ids("Marked phones.");  // text offset 0
        const int32_t start = engine->backbone_info().audio_start_token;
        if (start >= 0) prompt.push_back(start);
        EXPECT_EQ(engine->continue_prompt(prompt, 3, 4.0), synthesis.tokens) << "speculative " << speculative;
        EXPECT_NE(engine->continue_prompt(prompt, 4, 4.0), synthesis.tokens);
    }
}

TEST(ContinuePrompt, APromptOutsideTheLayoutIsAnError) {
    const auto engine = marker_engine(true, 60);
    EXPECT_THROW(engine->continue_prompt({}, 3, 4.0), Error);
    try {
        engine->continue_prompt({17, 5, 95}, 3, 4.0);  // 95: an audio token among the text
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("prompt token 95 at 2"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cadenza
