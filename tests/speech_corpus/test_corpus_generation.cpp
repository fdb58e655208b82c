// A tiny real corpus: the fixture's sentences spoken by flite.slt and, when
// installed, festival.kal_diphone; then the same command again (nothing to
// do) and once more after losing two files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "phone_alignment.h"
#include "speech_corpus_builder.h"
#include "utterance_audio.h"
#include "utterance_synthesis.h"

namespace cadenza::speech_corpus {
namespace {

namespace fs = std::filesystem;

const VoiceDetection& installed_voices() {
    static const VoiceDetection detection = detect_voices();
    return detection;
}

bool installed(const std::string& name) {
    const auto& voices = installed_voices().installed;
    return std::any_of(voices.begin(), voices.end(), [&](const Voice& v) { return v.name == name; });
}

std::string read_text(const fs::path& path) {
    std::ifstream input(path);
    std::ostringstream content;
    content << input.rdbuf();
    return content.str();
}

class CorpusGeneration : public ::testing::Test {
protected:
    void SetUp() override {
        directory_ = fs::temp_directory_path() / ("cadenza-speech-corpus-" + std::to_string(::getpid()) + "-" +
                                                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(directory_);
    }
    void TearDown() override { fs::remove_all(directory_); }
    fs::path directory_;
};

// Every voice installed, one sentence at four variations: the synthesizer
// stretch and the playback speed together give duration factor D, whatever P.
TEST_F(CorpusGeneration, VariationsScaleDurationByTheRateFactorOnly) {
    if (installed_voices().installed.empty()) GTEST_SKIP() << "no voice installed";
    NormalizedSentence normalized;
    normalized.text = "the quick brown fox jumps over the lazy dog while the cat watches";
    normalized.spoken = normalized.text + ".";
    const CorpusSentence sentence = assign_splits({normalized}).front();
    const std::vector<Variation> variations = {make_variation(1.0, 1.0), make_variation(1.2, 1.0),
                                               make_variation(1.0, 1.12), make_variation(0.85, 0.9)};
    UtteranceSynthesizer synthesizer((directory_ / "work").string());
    for (const Voice& voice : installed_voices().installed) {
        const CorpusVoice corpus_voice{voice, variations};
        std::vector<PlannedUtterance> planned;
        for (const auto& variation : variations) {
            PlannedUtterance p;
            p.voice = &corpus_voice;
            p.variation = variation;
            p.spoken = sentence.spoken;
            p.utterance.path = (directory_ / voice.name / (variation.name + ".wav")).string();
            planned.push_back(p);
        }
        std::vector<const PlannedUtterance*> batch;
        for (const auto& p : planned) batch.push_back(&p);
        std::vector<double> seconds(variations.size(), 0.0);
        synthesizer.synthesize(batch, [&](size_t i, const UtteranceOutcome& outcome) {
            EXPECT_EQ(outcome.error, "") << voice.name;
            seconds[i] = outcome.duration_seconds;
        });
        ASSERT_GT(seconds[0], 1.5) << voice.name;
        EXPECT_NEAR(seconds[1] / seconds[0], 1.2, 0.1) << voice.name;
        EXPECT_NEAR(seconds[2] / seconds[0], 1.0, 0.08) << voice.name;
        EXPECT_NEAR(seconds[3] / seconds[0], 0.85, 0.08) << voice.name;
        const audio::Waveform written = audio::read_waveform(planned[0].utterance.path);
        EXPECT_EQ(written.sample_rate, 16000);
        EXPECT_NEAR(written.duration_seconds(), seconds[0], 1e-9);
        // Its phones: a pause at each end, in time order, ending with the file.
        for (size_t v = 0; v < variations.size(); ++v) {
            const auto phones = read_phone_alignment(phone_alignment_path(planned[v].utterance.path));
            ASSERT_GE(phones.size(), 10u) << voice.name;
            EXPECT_EQ(phones.front().phone, "pau") << voice.name;
            EXPECT_EQ(phones.back().phone, "pau") << voice.name;
            EXPECT_NEAR(phones.back().end_seconds, seconds[v], 0.12) << voice.name;
            EXPECT_GT(phones[phones.size() / 2].end_seconds, 0.2 * seconds[v]) << voice.name;
        }
        // Speaking the first again after the others gives the same audio.
        const audio::Waveform first = audio::read_waveform(planned[0].utterance.path);
        synthesizer.synthesize({batch[0]}, [&](size_t, const UtteranceOutcome& outcome) {
            EXPECT_EQ(outcome.error, "") << voice.name;
        });
        EXPECT_EQ(audio::read_waveform(planned[0].utterance.path).samples, first.samples) << voice.name;
    }
}

TEST_F(CorpusGeneration, MakesDescribesAndResumesATinyCorpus) {
    std::string voices;
    if (installed("flite.slt")) voices = "flite.slt";
    if (installed("festival.kal_diphone")) voices += std::string(voices.empty() ? "" : ",") + "festival.kal_diphone";
    if (voices.empty()) GTEST_SKIP() << "neither flite.slt nor festival.kal_diphone is installed";

    SpeechCorpusOptions options;
    options.output = directory_.string();
    options.fortunes_directory = std::string(SPEECH_CORPUS_FIXTURES) + "/fortunes";
    options.voices = voices;
    options.train_hours = 0.002;  // about two utterances
    options.limit_sentences = 3;
    options.jobs = 2;
    options.seed = 5;
    options.batch_size = 2;
    options.command_line = "test";
    const CorpusSummary first = build_speech_corpus(options);
    const auto& made = first.generation;
    EXPECT_EQ(made.failed, 0u);
    EXPECT_EQ(made.reused, 0u);
    EXPECT_GE(made.generated, 2u);
    EXPECT_EQ(made.generated, made.planned);

    // The manifest: what was made, readable, files at 16 kHz with the durations it says.
    const auto utterances = read_corpus_manifest((directory_ / "manifest.tsv").string());
    ASSERT_EQ(utterances.size(), made.generated);
    double seconds = 0.0;
    for (const auto& u : utterances) {
        EXPECT_EQ(u.path, (directory_ / "wav" / u.voice / (u.id + ".wav")).string());
        const audio::Waveform w = audio::read_waveform(u.path);
        EXPECT_EQ(w.sample_rate, 16000);
        EXPECT_NEAR(w.duration_seconds(), u.duration_seconds, 0.0005);
        const Variation variation = make_variation(std::stod(u.variation.substr(1, 4)), std::stod(u.variation.substr(7)));
        EXPECT_EQ(variation.name, u.variation);
        const double expected = estimated_speech_seconds(u.text) * variation.duration_factor;
        EXPECT_GT(u.duration_seconds, 0.6 * expected) << u.id << " " << u.text;
        EXPECT_LT(u.duration_seconds, 1.6 * expected) << u.id << " " << u.text;
        seconds += u.duration_seconds;
    }
    const std::string manifest = read_text(directory_ / "manifest.tsv");
    write_corpus_manifest((directory_ / "copy.tsv").string(), utterances);
    EXPECT_EQ(read_text(directory_ / "copy.tsv"), manifest);

    // sentences.tsv and corpus.json agree with the manifest.
    EXPECT_EQ(read_text(directory_ / "sentences.tsv").rfind("id\tsplit\ttext\n", 0), 0u);
    const auto json = nlohmann::json::parse(read_text(directory_ / "corpus.json"));
    double hours = 0.0;
    size_t count = 0;
    for (const char* split : {"train", "dev", "test"}) {
        hours += json["splits"][split]["hours"].get<double>();
        count += json["splits"][split]["utterances"].get<size_t>();
    }
    EXPECT_NEAR(hours * 3600.0, seconds, 0.01);
    EXPECT_EQ(count, utterances.size());
    EXPECT_EQ(json["seed"], 5);
    EXPECT_EQ(json["command"], "test");
    EXPECT_EQ(json["voices"].size(), first.voices.size());
    EXPECT_FALSE(fs::exists(directory_ / ".work"));

    // Again: everything is there already.
    const CorpusSummary second = build_speech_corpus(options);
    EXPECT_EQ(second.generation.generated, 0u);
    EXPECT_EQ(second.generation.reused, made.generated);
    EXPECT_EQ(read_text(directory_ / "manifest.tsv"), manifest);

    // An interrupted run: one file missing, one cut short; only those two are made again.
    fs::remove(utterances[0].path);
    { std::ofstream(utterances.back().path, std::ios::trunc) << "RIFF"; }
    const CorpusSummary third = build_speech_corpus(options);
    EXPECT_EQ(third.generation.generated, 2u);
    EXPECT_EQ(third.generation.reused, made.generated - 2);
    EXPECT_EQ(read_corpus_manifest((directory_ / "manifest.tsv").string()).size(), utterances.size());
}

TEST_F(CorpusGeneration, RejectsUnknownAndMissingVoices) {
    SpeechCorpusOptions options;
    options.output = directory_.string();
    options.fortunes_directory = std::string(SPEECH_CORPUS_FIXTURES) + "/fortunes";
    options.voices = "flite.nobody";
    EXPECT_THROW(build_speech_corpus(options), std::invalid_argument);
    options.voices = "festival.rab_diphone";
    if (!installed("festival.rab_diphone")) EXPECT_THROW(build_speech_corpus(options), std::invalid_argument);
}

}  // namespace
}  // namespace cadenza::speech_corpus
