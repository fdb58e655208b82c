// Token sequences of a zero-shot TTS target: layout, voice-prompt pairing.
#include <gtest/gtest.h>

#include <set>

#include "speech_token_corpus.h"

namespace {

using namespace cadenza::training;

std::vector<EncodedUtterance> utterances() {
    std::vector<EncodedUtterance> list;
    for (int i = 0; i < 12; ++i) {
        EncodedUtterance u;
        u.id = "u" + std::to_string(i);
        u.voice = i % 2 ? "flite.slt" : "flite.rms";
        u.variation = i % 3 ? "r1.00-p1.00" : "r0.90-p1.10";
        u.text_ids = {1, 2, 3 + i % 5};
        for (int k = 0; k < 20 + i; ++k) u.codes.push_back((i * 37 + k) % 100);
        list.push_back(u);
    }
    EncodedUtterance alone{"alone", "festival.kal_diphone", "r1.00-p1.00", {4}, {5, 6, 7}};
    list.push_back(alone);
    return list;
}

TEST(SpeechTokenCorpus, PromptsComeFromAnotherUtteranceOfTheSameVoiceAndVariation) {
    const auto list = utterances();
    const auto choices = choose_voice_prompts(list, 16, 7);
    ASSERT_EQ(choices.size(), list.size());
    for (size_t i = 0; i + 1 < list.size(); ++i) {
        const auto& prompt = list[choices[i].prompt_index];
        EXPECT_NE(choices[i].prompt_index, i);
        EXPECT_EQ(prompt.voice, list[i].voice);
        EXPECT_EQ(prompt.variation, list[i].variation);
        EXPECT_EQ(choices[i].length, 16);  // every utterance has >= 20 codes
        EXPECT_LE(choices[i].begin + choices[i].length, static_cast<int64_t>(prompt.codes.size()));
    }
    EXPECT_EQ(choices.back().length, 0) << "alone in its voice: no prompt";
    const auto again = choose_voice_prompts(list, 16, 7);
    for (size_t i = 0; i < list.size(); ++i) EXPECT_EQ(again[i].prompt_index, choices[i].prompt_index);
}

TEST(SpeechTokenCorpus, SequencesFollowTheLayout) {
    const auto list = utterances();
    const auto layout = SpeechTokenLayout::packed(10, 100);
    EXPECT_EQ(layout.audio_token_offset, 10);
    EXPECT_EQ(layout.audio_start_token, 110);
    EXPECT_EQ(layout.end_token, 111);
    EXPECT_EQ(layout.vocab_size(), 112);
    const auto choices = choose_voice_prompts(list, 16, 7);
    const auto sequences = make_speech_sequences(list, choices, layout);
    ASSERT_EQ(sequences.size(), list.size() - 1);
    const auto& s = sequences[0];
    const auto& u = list[0];
    // [text][start][prompt][start] | [codes][end]
    ASSERT_EQ(s.prompt_length, static_cast<int64_t>(u.text_ids.size()) + 2 + 16);
    EXPECT_EQ(s.tokens[u.text_ids.size()], 110);
    EXPECT_EQ(s.tokens[s.prompt_length - 1], 110);
    const auto& prompt = list[choices[0].prompt_index];
    EXPECT_EQ(s.tokens[u.text_ids.size() + 1], 10 + prompt.codes[static_cast<size_t>(choices[0].begin)]);
    EXPECT_EQ(s.target_length(), static_cast<int64_t>(u.codes.size()) + 1);
    EXPECT_EQ(s.tokens.back(), 111);
    EXPECT_EQ(s.tokens[s.prompt_length], 10 + u.codes[0]);
    const auto round_trip = SpeechTokenLayout::from_json(layout.to_json(), "test");
    EXPECT_EQ(round_trip.end_token, layout.end_token);
    EXPECT_EQ(round_trip.text_pad_id, -1);  // not recorded
    auto padded = layout;
    padded.text_pad_id = 3;
    EXPECT_NE(padded.to_json().find("\"text_pad_id\": 3"), std::string::npos) << padded.to_json();
    EXPECT_EQ(SpeechTokenLayout::from_json(padded.to_json(), "test").text_pad_id, 3);
}

TEST(SpeechTokenCorpus, PhoneMarkersGoBeforeTheFirstFrameOfTheirPhone) {
    // Frames at 0, 0.02, ... 0.10 s; phone 4 ends at 0.03 (frames 0, 1), phone
    // 5 at 0.035 (no frame of its own), phone 6 at 0.08 (frames 2-3), phone 7
    // (the last) takes frames 4-5 although it ends at 0.09.
    const auto markers = place_phone_markers({4, 5, 6, 7}, {0.03, 0.035, 0.08, 0.09}, 6, 50.0);
    ASSERT_EQ(markers.size(), 4u);
    EXPECT_EQ(markers[0].frame, 0);
    EXPECT_EQ(markers[1].frame, 2);
    EXPECT_EQ(markers[2].frame, 2);
    EXPECT_EQ(markers[3].frame, 4);
    EXPECT_EQ(markers[3].text_id, 7);
    EXPECT_THROW(place_phone_markers({4}, {}, 6, 50.0), std::invalid_argument);

    auto list = utterances();
    list[0].codes = {0, 1, 2, 3, 4, 5};
    list[0].markers = markers;
    list[0].markers.push_back({6, 8});  // a phone after the last frame: before the end token
    auto layout = SpeechTokenLayout::packed(10, 100);
    layout.phone_markers = true;
    const auto sequences = make_speech_sequences(list, choose_voice_prompts(list, 16, 7), layout);
    const auto& s = sequences[0];
    const std::vector<int32_t> target(s.tokens.begin() + s.prompt_length, s.tokens.end());
    EXPECT_EQ(target, (std::vector<int32_t>{4, 10, 11, 5, 6, 12, 13, 7, 14, 15, 8, 111}));
    EXPECT_TRUE(SpeechTokenLayout::from_json(layout.to_json(), "test").phone_markers);
    EXPECT_FALSE(SpeechTokenLayout::from_json(SpeechTokenLayout::packed(10, 100).to_json(), "test").phone_markers);

    list[0].markers[1].text_id = 10;  // outside the 10 text ids
    EXPECT_THROW(make_speech_sequences(list, choose_voice_prompts(list, 16, 7), layout), std::out_of_range);
}

TEST(SpeechTokenCorpus, RejectsIdsOutsideTheLayout) {
    auto list = utterances();
    list[0].codes[3] = 100;
    const auto choices = choose_voice_prompts(list, 16, 7);
    EXPECT_THROW(make_speech_sequences(list, choices, SpeechTokenLayout::packed(10, 100)), std::out_of_range);
}

}  // namespace
