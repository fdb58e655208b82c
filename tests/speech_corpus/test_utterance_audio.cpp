#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "utterance_audio.h"

namespace cadenza::speech_corpus {
namespace {

audio::Waveform tone(double seconds, double frequency, int rate, double amplitude = 0.5) {
    audio::Waveform w;
    w.sample_rate = rate;
    w.samples.resize(static_cast<size_t>(seconds * rate));
    for (size_t i = 0; i < w.samples.size(); ++i)
        w.samples[i] = static_cast<float>(amplitude * std::sin(2.0 * M_PI * frequency * static_cast<double>(i) / rate));
    return w;
}

int zero_crossings(const audio::Waveform& w) {
    int crossings = 0;
    for (size_t i = 1; i < w.samples.size(); ++i) crossings += (w.samples[i - 1] < 0) != (w.samples[i] < 0);
    return crossings;
}

TEST(UtteranceAudio, PlaybackSpeedScalesPitchAndDurationAndConvertsTheRate) {
    const audio::Waveform original = tone(1.0, 200.0, 32000);
    const audio::Waveform faster = change_playback_speed(original, 1.25, 16000);
    EXPECT_EQ(faster.sample_rate, 16000);
    EXPECT_NEAR(faster.duration_seconds(), 0.8, 0.01);
    // 250 Hz for 0.8 s: 200 periods, two crossings each.
    EXPECT_NEAR(zero_crossings(faster), 400, 6);
    const audio::Waveform slower = change_playback_speed(original, 0.9, 16000);
    EXPECT_NEAR(slower.duration_seconds(), 1.0 / 0.9, 0.01);
}

TEST(UtteranceAudio, TrimsSilenceButKeepsAMargin) {
    audio::Waveform w;
    w.sample_rate = 16000;
    w.samples.assign(16000, 0.0f);  // 1 s of silence
    const audio::Waveform speech = tone(0.5, 300.0, 16000);
    w.samples.insert(w.samples.end(), speech.samples.begin(), speech.samples.end());
    w.samples.insert(w.samples.end(), 16000, 0.0001f);  // 1 s of very quiet noise floor
    const audio::Waveform trimmed = trim_silence(w, 0.1);
    EXPECT_NEAR(trimmed.duration_seconds(), 0.7, 0.021);
    EXPECT_FLOAT_EQ(trimmed.samples.front(), 0.0f);

    audio::Waveform silent;
    silent.sample_rate = 16000;
    silent.samples.assign(8000, 0.0f);
    EXPECT_TRUE(trim_silence(silent).samples.empty());
}

TEST(UtteranceAudio, ProbesOnlyValidCorpusFiles) {
    const auto directory = std::filesystem::temp_directory_path() / ("cadenza-probe-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    const std::string good = (directory / "good.wav").string(), other_rate = (directory / "8k.wav").string(),
                      broken = (directory / "broken.wav").string();
    audio::write_waveform(good, tone(0.25, 440.0, 16000));
    audio::write_waveform(other_rate, tone(0.25, 440.0, 8000));
    { std::ofstream(broken) << "RIFF garbage"; }
    ASSERT_TRUE(probe_corpus_wav(good));
    EXPECT_NEAR(*probe_corpus_wav(good), 0.25, 1e-9);
    EXPECT_FALSE(probe_corpus_wav(other_rate));
    EXPECT_FALSE(probe_corpus_wav(broken));
    EXPECT_FALSE(probe_corpus_wav((directory / "missing.wav").string()));
    std::filesystem::remove_all(directory);
}

}  // namespace
}  // namespace cadenza::speech_corpus
