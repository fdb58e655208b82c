// A backbone with phone markers emits text ids among its audio tokens (the
// phone it speaks next); the engine lets it, passes over them when it
// collects frames, and bounds them. The phone_markers logits processor makes
// them follow the text. On the test doubles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "engine.h"
#include "error.h"
#include "pipeline_config.h"
#include "transition_matrix.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

struct Synthesis {
    std::vector<float> audio;
    DecodingStats stats;
    std::vector<int32_t> tokens;
    size_t frames() const { return static_cast<size_t>(std::lround(stats.audio_seconds * 50.0)); }
};

struct Options {
    bool phone_markers = true;  // the backbone places markers
    bool rule = true;           // [logits] processors = ["phone_markers"]
    int end_after = 40;
    double seconds = 4.0;
    bool speculative = false;
    bool unverified = false;  // Viterbi over the drafter's chain, without verification
    double temperature = 1.0;
    double max_phone_seconds = 0.0;
};

Options markers(int end_after, double seconds = 4.0) {
    Options options;
    options.end_after = end_after;
    options.seconds = seconds;
    return options;
}

// A uniform transition matrix over the doubles' vocabulary (80 text ids,
// audio start, end, 32 codes), for acceptor.viterbi.
std::string uniform_transitions() {
    constexpr int64_t vocab = 80 + 2 + 32;
    const auto file = test::fresh_directory("marker-viterbi") / "transitions.cdztrn";
    std::vector<float> uniform(static_cast<size_t>(vocab * vocab), 1.0f / vocab);
    TransitionMatrix::make_dense(vocab, uniform, {}).save(file.string());
    return file.string();
}

std::unique_ptr<Engine> marker_engine(const Options& o) {
    const std::string end_after = std::to_string(o.end_after);
    const std::string drafter = "[draft]\nplugin = \"test.markov_drafter\"\ntext_tokens = 80\naudio_tokens = 32\n"
                                "phone_markers = true\nend_after = " + end_after + "\nnoise = 0.5\n";
    const std::string pipeline =
        "[pipeline]\nseed = 3\nmax_audio_seconds = " + std::to_string(o.seconds) + "\n"
        "[sampling]\ntemperature = " + std::to_string(o.temperature) + "\n" +
        (o.rule ? "[logits]\nprocessors = [\"phone_markers\"]\n[logits.phone_markers]\nmax_phone_seconds = " +
                      std::to_string(o.max_phone_seconds) + "\n"
                : std::string()) +
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = " +
        end_after + "\nphone_markers = " + (o.phone_markers ? "true" : "false") + "\n" +
        (o.speculative ? drafter + "depth = 3\nbranching = 2\n[acceptor]\nplugin = \"acceptor.exact\"\n"
                       : std::string()) +
        (o.unverified ? drafter + "depth = 4\n[acceptor]\nplugin = \"acceptor.viterbi\"\ntransitions = \"" +
                            uniform_transitions() + "\"\n"
                      : std::string());
    return std::make_unique<Engine>(load_pipeline_config_string(pipeline, "markers.toml", test::source_dir(),
                                                                {{test::test_plugin_dir("doubles"), "test", true}}));
}

Synthesis synthesize(const Options& options) {
    const auto engine = marker_engine(options);
    SynthesisRequest request;
    request.text = "Marked phones.";
    Synthesis result;
    request.on_token = [&](int32_t token) { result.tokens.push_back(token); };
    result.audio = engine->synthesize(request);
    result.stats = engine->stats();
    return result;
}

// The markers emitted, in order.
std::vector<int32_t> markers_of(const Synthesis& synthesis) {
    std::vector<int32_t> markers;
    for (int32_t token : synthesis.tokens)
        if (token < 80) markers.push_back(token);
    return markers;
}

// frontend.chars: "Marked phones." is <bos> m a r k e d <space> p h o n e s . <eos>.
const std::vector<int32_t> text_phones = {17, 5, 22, 15, 9, 8, 4, 20, 12, 19, 18, 9, 23, 42};

TEST(PhoneMarkers, AreEmittedAmongTheAudioAndCarryNoAudio) {
    const Synthesis marked = synthesize(markers(40));
    ASSERT_FALSE(marked.audio.empty());
    EXPECT_EQ(marked.audio.size(), marked.frames() * 320);  // the tone codec: 320 samples per frame
    // Every emitted token but the end is a frame or a marker.
    EXPECT_GT(marked.stats.tokens_generated(), static_cast<int64_t>(marked.frames()) + 1);
    EXPECT_EQ(synthesize(markers(40)).audio, marked.audio);  // a seed repeats

    Options plain_backbone = markers(40);
    plain_backbone.phone_markers = plain_backbone.rule = false;
    const Synthesis plain = synthesize(plain_backbone);
    EXPECT_EQ(plain.stats.tokens_generated(), static_cast<int64_t>(plain.frames()) + 1);  // frames and the end
}

TEST(PhoneMarkers, FollowTheTextInOrder) {
    // The double, left to itself, would emit text ids at random. One text id
    // of 80 is allowed at a time, so markers are rare: a long synthesis.
    const Synthesis marked = synthesize(markers(300, 8.0));
    const std::vector<int32_t> emitted = markers_of(marked);
    ASSERT_GE(emitted.size(), 3u);
    ASSERT_LE(emitted.size(), text_phones.size());
    EXPECT_EQ(emitted,
              std::vector<int32_t>(text_phones.begin(), text_phones.begin() + static_cast<std::ptrdiff_t>(emitted.size())));
    // Greedy speculative decoding with exact acceptance emits what greedy
    // decoding emits: the drafts' wrong markers are rejected.
    Options greedy_options = markers(300, 8.0);
    greedy_options.temperature = 0.0;
    const Synthesis greedy = synthesize(greedy_options);
    EXPECT_GE(markers_of(greedy).size(), 2u);
    greedy_options.speculative = true;
    EXPECT_EQ(synthesize(greedy_options).tokens, greedy.tokens);
}

TEST(PhoneMarkers, UnverifiedDraftsFollowTheTextInOrder) {
    // Viterbi over the drafter's chain emits without a verification: the
    // rule draws where a phone ends from each row's text mass and renames
    // the markers to the text's phones, each at least one frame long.
    Options options = markers(300, 8.0);
    options.unverified = true;
    const Synthesis marked = synthesize(options);
    EXPECT_GT(marked.stats.mean_accepted_length(), 2.0);
    const std::vector<int32_t> emitted = markers_of(marked);
    ASSERT_GE(emitted.size(), 3u);
    ASSERT_LE(emitted.size(), text_phones.size());
    EXPECT_EQ(emitted,
              std::vector<int32_t>(text_phones.begin(), text_phones.begin() + static_cast<std::ptrdiff_t>(emitted.size())));
    for (size_t i = 1; i < marked.tokens.size(); ++i)
        EXPECT_FALSE(marked.tokens[i - 1] < 80 && marked.tokens[i] < 80) << "two markers at " << i;
    EXPECT_EQ(synthesize(options).tokens, marked.tokens);  // a seed repeats
}

TEST(PhoneMarkers, WithoutTheRuleGoWhereTheTargetPutsThem) {
    // The same backbone without the processor: markers come far more often,
    // and not in the text's order.
    Options free_markers = markers(300, 8.0);
    free_markers.rule = false;
    const std::vector<int32_t> emitted = markers_of(synthesize(free_markers));
    ASSERT_GT(emitted.size(), text_phones.size());
    EXPECT_NE(std::vector<int32_t>(emitted.begin(), emitted.begin() + static_cast<std::ptrdiff_t>(text_phones.size())),
              text_phones);
}

TEST(PhoneMarkers, AreBoundedByTheText) {
    // A model that never ends: the frames stop at max_audio_seconds, the
    // markers at one per text symbol plus 16.
    const Synthesis endless = synthesize(markers(100000, 1.0));
    EXPECT_LE(endless.frames(), 50u);
    const int64_t text_ids = 14 + 2;  // "Marked phones." with <bos> and <eos>
    EXPECT_LE(endless.stats.tokens_generated(), 50 + text_ids + 16);
}

TEST(PhoneMarkers, APhoneEndsAfterMaxPhoneSeconds) {
    // A model that never ends and rarely places a marker: with phones of at
    // most 0.1 s (5 frames) every phone of the text is spoken, then the end
    // is forced; without the limit the frames run to max_audio_seconds.
    for (const int mode : {0, 1, 2}) {  // plain, verified drafts, unverified drafts
        Options options = markers(100000, 8.0);
        options.speculative = mode == 1;
        options.unverified = mode == 2;
        options.max_phone_seconds = 0.1;
        const Synthesis limited = synthesize(options);
        EXPECT_EQ(markers_of(limited), text_phones);
        int longest = 0, run = 0;
        for (int32_t token : limited.tokens) {
            run = token < 80 ? 0 : run + 1;
            longest = std::max(longest, run);
        }
        EXPECT_LE(longest, 5 + 1);  // the last run holds the end token
        EXPECT_LE(limited.frames(), (text_phones.size() + 1) * 5);
    }
    EXPECT_EQ(synthesize(markers(100000, 2.0)).frames(), 100u);
}

TEST(PhoneMarkers, TheRuleNeedsAPhoneMarkerBackbone) {
    Options options = markers(40);
    options.phone_markers = false;
    try {
        marker_engine(options);
        FAIL() << "expected a configuration error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
        const std::string message = e.what();
        EXPECT_NE(message.find("markers.toml: [logits] phone_markers needs a backbone with phone markers"),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("test.markov_backbone"), std::string::npos) << message;
    }
}

// Self-distillation corpora: continuing a token prompt samples what a
// synthesis of the same text samples (same loop, markers and seed use).
TEST(ContinuePrompt, SamplesWhatASynthesisOfTheSameTextSamples) {
    for (const bool speculative : {false, true}) {
        Options options = markers(60);
        options.speculative = speculative;
        const Synthesis synthesis = synthesize(options);
        const auto engine = marker_engine(options);
        std::vector<int32_t> prompt = engine->text_ids("Marked phones.");  // text offset 0
        const int32_t start = engine->backbone_info().audio_start_token;
        if (start >= 0) prompt.push_back(start);
        EXPECT_EQ(engine->continue_prompt(prompt, 3, 4.0), synthesis.tokens) << "speculative " << speculative;
        EXPECT_NE(engine->continue_prompt(prompt, 4, 4.0), synthesis.tokens);
    }
}

TEST(ContinuePrompt, APromptOutsideTheLayoutIsAnError) {
    const auto engine = marker_engine(markers(60));
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
