#include <gtest/gtest.h>

#include <map>
#include <set>

#include "corpus_plan.h"

namespace cadenza::speech_corpus {
namespace {

std::vector<CorpusSentence> sentences(int count) {
    std::vector<NormalizedSentence> normalized;
    for (int i = 0; i < count; ++i) {
        NormalizedSentence s;
        s.text = "the quick brown fox number " + std::to_string(i) + " jumps over the lazy dog";
        s.spoken = s.text + ".";
        normalized.push_back(s);
    }
    return assign_splits(normalized);
}

std::vector<CorpusVoice> voices(uint64_t seed) {
    std::vector<CorpusVoice> result;
    for (const char* name : {"flite.slt", "flite.rms", "festival.kal_diphone"})
        result.push_back({{name, SynthesisEngine::flite, name, ""}, voice_variations(name, seed, 4)});
    return result;
}

TEST(VoiceVariations, AreDeterministicDistinctAndInRange) {
    const auto first = voice_variations("flite.slt", 7, 4);
    const auto again = voice_variations("flite.slt", 7, 4);
    const auto other_voice = voice_variations("flite.rms", 7, 4);
    const auto other_seed = voice_variations("flite.slt", 8, 4);
    ASSERT_EQ(first.size(), 4u);
    std::set<std::string> names;
    for (size_t i = 0; i < first.size(); ++i) {
        const Variation& v = first[i];
        EXPECT_EQ(v.name, again[i].name);
        EXPECT_TRUE(names.insert(v.name).second);
        EXPECT_GE(v.duration_factor, min_duration_factor);
        EXPECT_LE(v.duration_factor, max_duration_factor);
        EXPECT_GE(v.pitch_factor, min_pitch_factor);
        EXPECT_LE(v.pitch_factor, max_pitch_factor);
        EXPECT_EQ(v.name, make_variation(v.duration_factor, v.pitch_factor).name);
        EXPECT_DOUBLE_EQ(v.synthesizer_stretch(), v.duration_factor * v.pitch_factor);
        EXPECT_DOUBLE_EQ(v.playback_speed(), v.pitch_factor);
    }
    EXPECT_NE(first[0].name + first[1].name, other_voice[0].name + other_voice[1].name);
    EXPECT_NE(first[0].name + first[1].name, other_seed[0].name + other_seed[1].name);
    EXPECT_EQ(make_variation(0.9, 1.05).name, "r0.90-p1.05");
    // Many variations still get distinct names.
    std::set<std::string> many;
    for (const auto& v : voice_variations("flite.slt", 1, 40)) EXPECT_TRUE(many.insert(v.name).second) << v.name;
}

TEST(CorpusPlan, SpeaksDevAndTestOnceAndTrainUntilTheHoursAreReached) {
    const auto all = sentences(3000);
    const auto corpus_voices = voices(1);
    const double train_hours = 0.5;
    const auto plan = plan_corpus(all, corpus_voices, train_hours, "/tmp/corpus");

    std::map<std::string, std::string> split_of;
    for (const auto& s : all) split_of[s.id] = s.split;
    std::map<std::string, int> renderings;
    std::set<std::string> ids;
    double train_seconds = 0.0, last_train = 0.0;
    for (const auto& p : plan) {
        const Utterance& u = p.utterance;
        EXPECT_TRUE(ids.insert(u.id).second) << u.id;
        EXPECT_EQ(split_of.at(p.sentence_id), u.split);  // a sentence never leaves its split
        EXPECT_EQ(u.path, "/tmp/corpus/wav/" + u.voice + "/" + u.id + ".wav");
        EXPECT_EQ(u.id.rfind(p.sentence_id + "-", 0), 0u);
        EXPECT_EQ(u.variation, p.variation.name);
        EXPECT_EQ(u.voice, p.voice->voice.name);
        ++renderings[p.sentence_id];
        if (u.split == "train") {
            train_seconds += u.duration_seconds;
            last_train = u.duration_seconds;
        }
    }
    for (const auto& s : all)
        if (s.split != "train") EXPECT_EQ(renderings[s.id], 1) << s.id;
    EXPECT_GE(train_seconds, train_hours * 3600.0);
    EXPECT_LT(train_seconds - last_train, train_hours * 3600.0);

    const auto again = plan_corpus(all, voices(1), train_hours, "/tmp/corpus");
    ASSERT_EQ(again.size(), plan.size());
    for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(again[i].utterance.id, plan[i].utterance.id);
}

TEST(CorpusPlan, TrainSentencesGetMoreVoicesWhenTheHoursNeedThem) {
    const auto all = sentences(300);
    const auto corpus_voices = voices(1);
    const auto plan = plan_corpus(all, corpus_voices, 100.0, "/tmp/corpus");
    std::map<std::string, std::set<std::string>> voices_of;
    for (const auto& p : plan)
        if (p.utterance.split == "train") voices_of[p.sentence_id].insert(p.utterance.voice);
    // Far more hours than the sentences hold: every voice speaks every train sentence once.
    for (const auto& [sentence, voice_names] : voices_of) EXPECT_EQ(voice_names.size(), corpus_voices.size());
    EXPECT_THROW(plan_corpus(all, {}, 1.0, "/tmp/corpus"), std::invalid_argument);
}

TEST(CorpusPlan, EstimatedDurationGrowsWithTheText) {
    EXPECT_LT(estimated_speech_seconds("short one"), estimated_speech_seconds("a rather longer sentence than that"));
    EXPECT_NEAR(estimated_speech_seconds("the quick brown fox jumps over the lazy dog"), 2.8, 0.8);
}

}  // namespace
}  // namespace cadenza::speech_corpus
