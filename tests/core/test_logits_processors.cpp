// The logits-processor stage: the chain forwards every call to its
// processors in the pipeline's order, the phone-marker rule on its own
// rewrites rows as ELLA-V's inference asks, and on the test doubles the
// order of a chain changes what greedy decoding emits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "../doubles/recording_logits_processor.h"
#include "engine.h"
#include "engine_stages.h"
#include "error.h"
#include "logits_processor.h"
#include "logits_processor_factory.h"
#include "phone_marker_rule.h"
#include "pipeline_config.h"
#include "random_stream.h"
#include "status_object.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

TEST(LogitsProcessorChain, AppliesItsProcessorsInOrder) {
    std::vector<std::string> log;
    auto chain_of = [&](bool doubling_first) {
        LogitsProcessorChain chain;
        auto doubling = std::make_unique<test::RecordingLogitsProcessor>("double", log, 2.0f, 0.0f);
        auto shifting = std::make_unique<test::RecordingLogitsProcessor>("shift", log, 1.0f, 1.0f);
        if (doubling_first) {
            chain.add(std::move(doubling));
            chain.add(std::move(shifting));
        } else {
            chain.add(std::move(shifting));
            chain.add(std::move(doubling));
        }
        return chain;
    };
    const int32_t tokens[] = {4, 5}, parents[] = {-1, 0};
    const cdz_token_tree draft{sizeof(cdz_token_tree), 1, 1, tokens, parents};
    std::vector<float> logits = {1, 2, 3, 4};  // 2 rows of 2

    LogitsProcessorChain doubling_first = chain_of(true);
    doubling_first.apply(logits.data(), 2, &draft);
    EXPECT_EQ(logits, (std::vector<float>{3, 5, 7, 9}));  // (x * 2) + 1
    logits = {1, 2, 3, 4};
    LogitsProcessorChain shifting_first = chain_of(false);
    shifting_first.apply(logits.data(), 2, &draft);
    EXPECT_EQ(logits, (std::vector<float>{4, 6, 8, 10}));  // (x + 1) * 2

    log.clear();
    const cdz_token_tree tree{sizeof(cdz_token_tree), 2, 1, tokens, parents};
    doubling_first.start({1, 2, 3}, 64);
    doubling_first.evaluate(tree, 1, true);
    doubling_first.apply(logits.data(), 2, nullptr);
    const int32_t path[] = {0, 1};
    doubling_first.commit(path, 2);
    doubling_first.append(tokens, 2);
    EXPECT_EQ(log, (std::vector<std::string>{"double.start 3 64", "shift.start 3 64", "double.evaluate 2 1 logits",
                                             "shift.evaluate 2 1 logits", "double.apply 1", "shift.apply 1",
                                             "double.commit 2 last 1", "shift.commit 2 last 1",
                                             "double.append 2 last 5", "shift.append 2 last 5"}));
}

// A backbone with text ids 0..3 (the phones), codes 4..6, end 7 and audio
// start 8, at 10 frames per second.
struct MarkerStages {
    EngineStages stages;
    MarkerStages() {
        cdz_backbone_info& b = stages.backbone_info;
        b.vocab_size = 9;
        b.text_token_offset = 0;
        b.text_token_count = 4;
        b.audio_token_offset = 4;
        b.audio_token_count = 3;
        b.end_token = 7;
        b.audio_start_token = 8;
        b.phone_markers = 1;
        stages.codec_info.frame_rate = 10.0;
    }
};

cdz_params max_phone_seconds(double seconds) {
    cdz_params params;
    ParameterValue value;
    value.type = CDZ_PARAM_FLOAT;
    value.number = seconds;
    params.values["max_phone_seconds"] = value;
    return params;
}

constexpr float masked = -std::numeric_limits<float>::infinity();

TEST(PhoneMarkerRule, GivesTheTextMassToTheNextPhoneOfEachRow) {
    MarkerStages s;
    PhoneMarkerRule rule(s.stages, max_phone_seconds(0.2), "rule.toml");  // 2 frames
    rule.start({2, 0, 3, 8}, 32);                                           // phones 2, 0, 3
    // Draft: marker 2, then codes 4 and 5 under it.
    const int32_t tokens[] = {2, 4, 5}, parents[] = {-1, 0, 1};
    const cdz_token_tree draft{sizeof(cdz_token_tree), 3, 1, tokens, parents};
    std::vector<float> logits;
    for (int row = 0; row < 4; ++row)
        for (float logit : {1.0f, 2.0f, 3.0f, 4.0f, 0.5f, 0.5f, 0.5f, 0.0f, 0.0f}) logits.push_back(logit);
    rule.apply(logits.data(), 9, &draft);
    const float text_mass = std::log(std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f) + std::exp(4.0f));
    auto row = [&](int r) { return std::vector<float>(logits.begin() + r * 9, logits.begin() + (r + 1) * 9); };
    // Row 0 (after the prompt): phone 2 next. Row 1 (after marker 2): phone 0.
    EXPECT_EQ(row(0)[0], masked);
    EXPECT_EQ(row(0)[1], masked);
    EXPECT_NEAR(row(0)[2], text_mass, 1e-5);
    EXPECT_EQ(row(0)[3], masked);
    EXPECT_NEAR(row(1)[0], text_mass, 1e-5);
    EXPECT_EQ(row(1)[2], masked);
    EXPECT_EQ(row(1)[4], 0.5f);  // codes untouched
    // Row 3: phone 2 has lasted 2 frames: only the next phone may come.
    EXPECT_EQ(row(3), (std::vector<float>{0.0f, masked, masked, masked, masked, masked, masked, masked, 0.0f}));
}

TEST(PhoneMarkerRule, CountsWhatTheSequenceEmitsAndEndsAfterTheLastPhone) {
    MarkerStages s;
    PhoneMarkerRule rule(s.stages, max_phone_seconds(0.2), "rule.toml");
    rule.start({2, 0, 3, 8}, 32);
    const int32_t emitted[] = {2, 4, 0, 3, 5};  // every phone spoken, one frame since the last
    rule.append(emitted, 5);
    std::vector<float> logits = {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, 0, 0};
    rule.apply(logits.data(), 9, nullptr);
    EXPECT_EQ(logits, (std::vector<float>{masked, masked, masked, masked, 0.5f, 0.5f, 0.5f, 0, 0}));  // no marker left
    const int32_t frame = 6;
    rule.append(&frame, 1);  // 2 frames: the end is forced
    logits = {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, -3, 0};
    rule.apply(logits.data(), 9, nullptr);
    EXPECT_EQ(logits, (std::vector<float>{masked, masked, masked, masked, masked, masked, masked, 0, 0}));
    rule.start({2, 0, 3, 8}, 32);  // a new synthesis starts over
    logits = {1, 2, 3, 4, 0.5f, 0.5f, 0.5f, -3, 0};
    rule.apply(logits.data(), 9, nullptr);
    EXPECT_NE(logits[2], masked);
}

TEST(PhoneMarkerRule, DrawsWhereAnUnverifiedPhoneEndsFromTheTextMass) {
    MarkerStages s;
    PhoneMarkerRule rule(s.stages, max_phone_seconds(0), "rule.toml");
    rule.start({2, 0, 3, 8}, 32);  // phones 2, 0, 3
    // Two rows of a head's distributions: text mass 0.3 (spread over the
    // four ids), codes 0.6, the end 0.1.
    const std::vector<float> head = {0.05f, 0.1f, 0.1f, 0.05f, 0.3f, 0.2f, 0.1f, 0.1f, 0.0f};
    cdz_rng rng;
    random_stream_seed(rng, 11);
    constexpr int draws = 20000;
    int ended = 0, ended_twice = 0;
    for (int d = 0; d < draws; ++d) {
        std::vector<float> rows(head);
        rows.insert(rows.end(), head.begin(), head.end());
        rule.apply_unverified(rows.data(), 2, 9, rng);
        const bool marker = rows[2] == 1.0f;
        if (marker) {
            EXPECT_EQ(rows[0] + rows[1] + rows[3] + rows[4] + rows[5] + rows[6] + rows[7], 0.0f);
            ++ended;
        } else {
            // The phone goes on: the text ids lose their mass, the rest is renormalized.
            EXPECT_EQ(rows[0] + rows[1] + rows[2] + rows[3], 0.0f);
            EXPECT_NEAR(rows[4], 0.3f / 0.7f, 1e-6);
            EXPECT_NEAR(rows[7], 0.1f / 0.7f, 1e-6);
        }
        // A phone lasts at least one frame: no marker right after a marker.
        if (marker && rows[9 + 2] == 1.0f) ++ended_twice;
    }
    EXPECT_EQ(ended_twice, 0);
    // Chi-square with one degree of freedom against P(end) = 0.3; 10.83 is its 0.1% point.
    const double expected = 0.3 * draws;
    const double chi_square = (ended - expected) * (ended - expected) / expected +
                              (ended - expected) * (ended - expected) / (draws - expected);
    EXPECT_LT(chi_square, 10.83) << ended << " phone ends in " << draws << " draws";
}

TEST(PhoneMarkerRule, AnUnverifiedPhoneEndsOnceForTheMassOfItsId) {
    MarkerStages s;
    PhoneMarkerRule rule(s.stages, max_phone_seconds(0), "rule.toml");
    rule.start({2, 0, 3, 8}, 32);  // phones 2, 0, 3
    // Row 0 holds text ids alone: phone 2 begins there. Row 1 holds codes
    // alone. Row 2 gives phone 2's id 0.4, the next phone's 0.1 and codes
    // 0.5: phone 2 has begun on this path, so its 0.4 is not another phone's
    // end, and phone 0 begins with probability 0.1 / (0.1 + 0.5).
    const std::vector<float> rows_in = {0.5f, 0.0f, 0.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,
                                        0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 0.3f, 0.2f, 0.0f, 0.0f,
                                        0.1f, 0.0f, 0.4f, 0.0f, 0.2f, 0.2f, 0.1f, 0.0f, 0.0f};
    cdz_rng rng;
    random_stream_seed(rng, 5);
    constexpr int draws = 20000;
    int ended = 0;
    for (int d = 0; d < draws; ++d) {
        std::vector<float> rows(rows_in);
        rule.apply_unverified(rows.data(), 3, 9, rng);
        ASSERT_EQ(rows[2], 1.0f);                                        // row 0: phone 2
        ASSERT_EQ(std::vector<float>(rows.begin() + 9, rows.begin() + 18),  // row 1 stands
                  std::vector<float>(rows_in.begin() + 9, rows_in.begin() + 18));
        if (rows[18 + 0] == 1.0f) {
            ++ended;
        } else {
            EXPECT_EQ(rows[18 + 2], 0.0f);
            EXPECT_NEAR(rows[18 + 4], 0.2f / 0.5f, 1e-6);
        }
    }
    const double expected = draws / 6.0;
    const double chi_square = (ended - expected) * (ended - expected) / expected +
                              (ended - expected) * (ended - expected) / (draws - expected);
    EXPECT_LT(chi_square, 10.83) << ended << " phone ends in " << draws << " draws";
}

TEST(PhoneMarkerRule, RenamesUnverifiedMarkersToThePhonesInOrder) {
    MarkerStages s;
    PhoneMarkerRule rule(s.stages, max_phone_seconds(0.2), "rule.toml");  // 2 frames
    rule.start({2, 0, 3, 8}, 32);                                           // phones 2, 0, 3
    std::vector<int32_t> tokens = {1, 4, 1, 5};
    EXPECT_EQ(rule.rewrite_unverified(tokens.data(), tokens.size()), 4u);
    EXPECT_EQ(tokens, (std::vector<int32_t>{2, 4, 0, 5}));
    // A phone that reaches 2 frames ends: the next phone is forced, and the
    // step ends with it.
    tokens = {4, 5, 6, 6};
    EXPECT_EQ(rule.rewrite_unverified(tokens.data(), tokens.size()), 3u);
    EXPECT_EQ(tokens[2], 2);
    // The end token ends the step.
    tokens = {4, 7, 5};
    EXPECT_EQ(rule.rewrite_unverified(tokens.data(), tokens.size()), 2u);
    // Past the last phone, a marker ends the step before it, or, first, ends the audio.
    const int32_t spoken[] = {2, 4, 0, 4, 3};
    rule.append(spoken, 5);
    tokens = {5, 1, 5};
    EXPECT_EQ(rule.rewrite_unverified(tokens.data(), tokens.size()), 1u);
    tokens = {1, 5};
    EXPECT_EQ(rule.rewrite_unverified(tokens.data(), tokens.size()), 1u);
    EXPECT_EQ(tokens[0], 7);
}

TEST(PhoneMarkerRule, NeedsABackboneWithPhoneMarkers) {
    MarkerStages s;
    s.stages.backbone_info.phone_markers = 0;
    EXPECT_THROW(PhoneMarkerRule(s.stages, max_phone_seconds(0), "rule.toml"), Error);
}

// The doubles with phone markers, greedy, through `processors`.
PipelineConfig ordered_pipeline(const std::string& processors) {
    const std::string pipeline =
        "[pipeline]\nseed = 3\nmax_audio_seconds = 4.0\n[sampling]\ntemperature = 0.0\n"
        "[logits]\nprocessors = " + processors + "\n[logits.classifier_free_guidance]\nscale = 3.0\n"
        "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
        "[codec]\nplugin = \"test.tone_codec\"\n"
        "[backbone]\nplugin = \"test.markov_backbone\"\ntext_tokens = 80\naudio_tokens = 32\nend_after = 60\n"
        "context_weight = 2.0\nphone_markers = true\n";
    return load_pipeline_config_string(pipeline, "order.toml", test::source_dir(),
                                       {{test::test_plugin_dir("doubles"), "test", true}});
}

TEST(LogitsProcessorFactory, BuildsTheChainInThePipelinesOrder) {
    const PipelineConfig config = ordered_pipeline("[\"phone_markers\", \"classifier_free_guidance\"]");
    EngineStages stages;
    stages.frontend = std::make_unique<PluginInstance>(*config.stage("frontend"), "cpu", 1);
    stages.backbone = std::make_unique<PluginInstance>(*config.stage("backbone"), "cpu", 1);
    throw_if_error(stages.frontend->vtable<cdz_frontend_vtable>().get_info(stages.frontend->context(),
                                                                           &stages.frontend_info),
                   "frontend");
    throw_if_error(stages.backbone->vtable<cdz_backbone_vtable>().get_info(stages.backbone->context(),
                                                                           &stages.backbone_info),
                   "backbone");
    EXPECT_EQ(build_logits_chain(config, stages).names(),
              (std::vector<std::string>{"phone_markers", "classifier_free_guidance"}));
    PipelineConfig reversed = config;
    std::swap(reversed.logits_processors[0], reversed.logits_processors[1]);
    EXPECT_EQ(build_logits_chain(reversed, stages).names(),
              (std::vector<std::string>{"classifier_free_guidance", "phone_markers"}));
    reversed.logits_processors.clear();
    EXPECT_TRUE(build_logits_chain(reversed, stages).empty());
}

// Greedy tokens through `processors`.
std::vector<int32_t> tokens_through(const std::string& processors) {
    Engine engine(ordered_pipeline(processors));
    SynthesisRequest request;
    request.text = "Marked phones.";
    std::vector<int32_t> tokens;
    request.on_token = [&](int32_t token) { tokens.push_back(token); };
    engine.synthesize(request);
    return tokens;
}

TEST(LogitsProcessorChain, ThePipelinesOrderIsTheOrderOfApplication) {
    const auto guided_then_ruled = tokens_through("[\"classifier_free_guidance\", \"phone_markers\"]");
    const auto ruled_then_guided = tokens_through("[\"phone_markers\", \"classifier_free_guidance\"]");
    ASSERT_FALSE(guided_then_ruled.empty());
    ASSERT_FALSE(ruled_then_guided.empty());
    EXPECT_NE(guided_then_ruled, ruled_then_guided);
    EXPECT_EQ(tokens_through("[\"classifier_free_guidance\", \"phone_markers\"]"), guided_then_ruled);
}

}  // namespace
}  // namespace cadenza
