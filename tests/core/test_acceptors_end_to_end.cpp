// Every acceptance policy runs end to end through the engine's loop, on the
// test doubles: a draft, a verification (or none, for Viterbi), a commit,
// the codec, and statistics that add up.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "engine.h"
#include "error.h"
#include "pipeline_config.h"
#include "test_fixtures.h"
#include "transition_matrix.h"
#include "token_groups.h"

namespace cadenza {
namespace {

constexpr int64_t backbone_vocab = 128 + 2 + 32;  // text, audio start, end, audio (test.markov_backbone)

std::string pipeline_with(const std::string& acceptor, const std::string& draft = "depth = 3\n") {
    return "[pipeline]\nseed = 3\nmax_audio_seconds = 2.0\n"
           "[sampling]\ntemperature = 0.9\n"
           "[frontend]\nplugin = \"frontend.chars\"\nvocabulary = \"models/frontend/english_chars.vocab\"\n"
           "[codec]\nplugin = \"test.tone_codec\"\n"
           "[backbone]\nplugin = \"test.markov_backbone\"\nend_after = 50\n"
           "[draft]\nplugin = \"test.markov_drafter\"\nend_after = 50\nnoise = 0.5\n" + draft +
           "[acceptor]\n" + acceptor;
}

Engine engine_for(const std::string& text) {
    return Engine(load_pipeline_config_string(text, "e2e.toml", test::source_dir(),
                                              {{test::test_plugin_dir("doubles"), "test", true}}));
}

void expect_a_full_synthesis(Engine& engine, bool verifies) {
    SynthesisRequest request;
    request.text = "End to end.";
    const auto audio = engine.synthesize(request);
    const auto& stats = engine.stats();
    EXPECT_EQ(audio.size(), 50u * 320u);  // end_after frames of 20 ms at 16 kHz
    EXPECT_EQ(stats.tokens_generated(), 51);
    EXPECT_LT(stats.steps(), stats.tokens_generated());  // more than one token per step on average
    EXPECT_GT(stats.mean_accepted_length(), 1.0);
    if (verifies) EXPECT_EQ(stats.target_passes(), stats.steps() + 1);  // the prefill, then one pass per step
    EXPECT_EQ(stats.draft_passes(), stats.steps());
    // The synthesis's first proposal is timed apart, and counted in the draft's time too.
    EXPECT_EQ(stats.first_draft_passes(), 1);
    EXPECT_GT(stats.first_draft_seconds, 0.0);
    EXPECT_LE(stats.first_draft_seconds, stats.draft_seconds);
    // The prefill is timed apart (and counted in the target's time too; how
    // the two compare is a matter of timing, which a loaded machine upsets).
    EXPECT_GT(stats.prefill_seconds, 0.0);
    EXPECT_GT(stats.verify_seconds, 0.0);
    // The wall's parts outside the loop: the prompt, and the whole decoding
    // after it (nothing streams, so nothing waits for audio in the loop).
    EXPECT_GT(stats.prompt_seconds, 0.0);
    EXPECT_EQ(stats.audio_wait_seconds, 0.0);
    EXPECT_GE(stats.audio_finish_seconds, stats.codec_seconds);
    EXPECT_LE(stats.loop_seconds + stats.prompt_seconds + stats.audio_finish_seconds, stats.wall_seconds);
    // The same seed repeats the synthesis bit for bit.
    EXPECT_EQ(engine.synthesize(request), audio);

    // Streamed: handing chunks to the codec is timed in the loop's steps,
    // outside the loop's own time, and the same audio arrives.
    std::vector<float> streamed;
    request.on_audio = [&](const float* samples, size_t count) {
        streamed.insert(streamed.end(), samples, samples + count);
        return true;
    };
    engine.synthesize(request);
    EXPECT_EQ(streamed, audio);
    const auto& streaming = engine.stats();
    EXPECT_GT(streaming.audio_wait_seconds, 0.0);
    EXPECT_GT(streaming.audio_finish_seconds, 0.0);
    EXPECT_LE(streaming.loop_seconds + streaming.prompt_seconds + streaming.audio_wait_seconds +
                  streaming.audio_finish_seconds,
              streaming.wall_seconds);
}

TEST(AcceptorsEndToEnd, Exact) {
    Engine engine = engine_for(pipeline_with("plugin = \"acceptor.exact\"\n"));
    expect_a_full_synthesis(engine, true);
}

TEST(AcceptorsEndToEnd, ExactWithADrafterThatReturnsItsOwnTensor) {
    // The markov drafter writes into the host's lent buffer unless told not to.
    Engine engine = engine_for(pipeline_with("plugin = \"acceptor.exact\"\n", "depth = 3\nlent_buffer = false\n"));
    expect_a_full_synthesis(engine, true);
}

TEST(AcceptorsEndToEnd, AnAcceptorWithSessionsHearsEveryCommittedToken) {
    // test.session_acceptor fails any step whose sequence is not the prompt
    // plus what session_commit reported; a second synthesis resets it.
    Engine engine = engine_for(pipeline_with("plugin = \"test.session_acceptor\"\n"));
    SynthesisRequest request;
    request.text = "Sessions.";
    const auto audio = engine.synthesize(request);
    EXPECT_EQ(audio.size(), 50u * 320u);
    EXPECT_EQ(engine.stats().steps(), engine.stats().tokens_generated());  // greedy: one token per step
    EXPECT_EQ(engine.synthesize(request), audio);
}

TEST(AcceptorsEndToEnd, AnAcceptorReadingRowsOnDemandGetsTheRowsTheHostWouldFill) {
    // Both doubles emit row 0's most probable token; test.row_reading_acceptor
    // fails unless the host lends the rows through target_row.
    SynthesisRequest request;
    request.text = "Rows.";
    Engine filled = engine_for(pipeline_with("plugin = \"test.session_acceptor\"\n"));
    Engine lent = engine_for(pipeline_with("plugin = \"test.row_reading_acceptor\"\n"));
    const auto audio = lent.synthesize(request);
    EXPECT_EQ(audio.size(), 50u * 320u);
    EXPECT_EQ(audio, filled.synthesize(request));
}

// A synthesis through test.row_reading_acceptor with `parameters` fails
// with `code` and a message holding `message`.
void expect_synthesis_error(const std::string& parameters, cdz_status_code code, const std::string& message) {
    Engine engine = engine_for(pipeline_with("plugin = \"test.row_reading_acceptor\"\n" + parameters));
    SynthesisRequest request;
    request.text = "Rows.";
    try {
        engine.synthesize(request);
        FAIL() << "the synthesis succeeded; expected: " << message;
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), code);
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
}

TEST(AcceptorsEndToEnd, ARowOutsideTheStepIsAnErrorNamingTheAcceptor) {
    expect_synthesis_error("extra_row = 99\n", CDZ_STATUS_INVALID_ARGUMENT,
                           "test.row_reading_acceptor: asked for target row 99 of a step with 4 rows");
}

TEST(AcceptorsEndToEnd, TheAudioTakesTheAcceptorsAudioTokens) {
    // Greedy decoding whose every code the acceptor hears as code 1 (token
    // 131; the codes are tokens 130 on): the sequence, and so the tokens,
    // stay the greedy ones.
    SynthesisRequest request;
    request.text = "Rows.";
    std::vector<int32_t> greedy, heard_as_one;
    Engine plain = engine_for(pipeline_with("plugin = \"test.row_reading_acceptor\"\n"));
    request.on_token = [&](int32_t token) { greedy.push_back(token); };
    const auto greedy_audio = plain.synthesize(request);
    Engine ones = engine_for(pipeline_with("plugin = \"test.row_reading_acceptor\"\naudio_token = 131\naudio_from = 130\n"));
    request.on_token = [&](int32_t token) { heard_as_one.push_back(token); };
    const auto audio = ones.synthesize(request);
    EXPECT_EQ(heard_as_one, greedy);
    ASSERT_EQ(audio.size(), greedy_audio.size());
    EXPECT_NE(audio, greedy_audio);
    const Engine::Codes codes = ones.encode_audio(audio, static_cast<int>(ones.sample_rate()));
    EXPECT_EQ(codes.values, std::vector<int32_t>(codes.values.size(), 1));
}

TEST(AcceptorsEndToEnd, AnAudioTokenForANonAudioTokenIsAnErrorNamingTheAcceptor) {
    // Token 5 is a text token: it may stand for no code.
    expect_synthesis_error("audio_token = 5\n", CDZ_STATUS_INTERNAL,
                           "test.row_reading_acceptor gave audio token 5 for emitted token");
}

TEST(AcceptorsEndToEnd, BiasOnATree) {
    Engine engine = engine_for(pipeline_with("plugin = \"acceptor.bias\"\nbeta = 0.3\n", "depth = 2\nbranching = 2\n"));
    expect_a_full_synthesis(engine, true);
}

TEST(AcceptorsEndToEnd, ToleranceOnATree) {
    Engine engine = engine_for(pipeline_with("plugin = \"acceptor.tolerance\"\ntau = 4\n", "depth = 2\nbranching = 3\n"));
    expect_a_full_synthesis(engine, true);
}

// acceptor.pcg's table over audio tokens in overlapping groups of three
// neighbours (the rest singletons), the file in a fresh `directory`.
std::string pcg_over_neighbours(const std::string& directory) {
    pcg::TokenGroups groups;
    groups.vocab_size = backbone_vocab;
    groups.theta = 0.9;
    for (uint32_t t = 130; t + 2 < backbone_vocab; ++t) groups.add_group({t, t + 1, t + 2});
    const auto file = test::fresh_directory(directory) / "groups.cdzgrp";
    pcg::write_token_groups(file, groups);
    return "plugin = \"acceptor.pcg\"\ngroups = \"" + file.string() + "\"\n";
}

TEST(AcceptorsEndToEnd, PcgWithOverlappingGroups) {
    Engine engine = engine_for(pipeline_with(pcg_over_neighbours("e2e-pcg")));
    expect_a_full_synthesis(engine, true);
}

TEST(AcceptorsEndToEnd, PcgWithTheTargetsCodeInEachAcceptedGroup) {
    // group_code = "target": the codec hears a member of each accepted group
    // drawn from the target, the sequence keeps the drafted token. The tone
    // codec's encoder reads back the codes the audio was made of.
    const std::string acceptor = pcg_over_neighbours("e2e-pcg-target-code");
    Engine engine = engine_for(pipeline_with(acceptor + "group_code = \"target\"\n"));
    expect_a_full_synthesis(engine, true);

    for (const bool target_code : {false, true}) {
        Engine run = engine_for(pipeline_with(acceptor + (target_code ? "group_code = \"target\"\n" : "")));
        SynthesisRequest request;
        request.text = "End to end.";
        std::vector<int32_t> sequence_codes;
        request.on_token = [&](int32_t token) {
            if (token >= 130) sequence_codes.push_back(token - 130);
        };
        const Engine::Codes heard = run.encode_audio(run.synthesize(request), static_cast<int>(run.sample_rate()));
        ASSERT_EQ(heard.values.size(), sequence_codes.size());
        size_t differing = 0;
        for (size_t i = 0; i < heard.values.size(); ++i) {
            if (heard.values[i] == sequence_codes[i]) continue;
            ++differing;
            // Only a member of a group holding the drafted code: a neighbour within 2.
            EXPECT_LE(std::abs(heard.values[i] - sequence_codes[i]), 2) << "frame " << i;
        }
        if (target_code)
            EXPECT_GT(differing, 0u) << "the audio heard every drafted code";
        else
            EXPECT_EQ(differing, 0u) << "group_code = \"draft\": the audio is the sequence's codes";
    }
}

TEST(AcceptorsEndToEnd, ViterbiEmitsWithoutVerification) {
    const auto directory = test::fresh_directory("e2e-viterbi");
    std::vector<float> uniform(static_cast<size_t>(backbone_vocab * backbone_vocab), 1.0f / backbone_vocab);
    const auto file = directory / "transitions.cdztrn";
    TransitionMatrix::make_dense(backbone_vocab, uniform, {}).save(file.string());
    Engine engine = engine_for(pipeline_with("plugin = \"acceptor.viterbi\"\ntransitions = \"" + file.string() +
                                             "\"\ntop_k = 3\n", "depth = 4\n"));
    expect_a_full_synthesis(engine, false);
    // Four tokens per step, one target pass per step to evaluate them.
    EXPECT_GT(engine.stats().mean_accepted_length(), 3.0);
}

}  // namespace
}  // namespace cadenza
