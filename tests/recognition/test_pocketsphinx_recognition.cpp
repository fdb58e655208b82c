// pocketsphinx on speech that the flite binary synthesizes at test time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "resampler.h"
#include "transcription_run.h"
#include "wav_file.h"

namespace cadenza::recognition {
namespace {

namespace fs = std::filesystem;

std::string find_on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    std::string directories = path ? path : "/usr/bin:/bin";
    size_t start = 0;
    while (start <= directories.size()) {
        size_t end = directories.find(':', start);
        if (end == std::string::npos) end = directories.size();
        const fs::path candidate = fs::path(directories.substr(start, end - start)) / program;
        if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
        start = end + 1;
    }
    return {};
}

bool model_installed() {
    std::error_code error;
    return fs::is_regular_file(fs::path(default_model_directory) / "mdef", error) &&
           fs::is_regular_file(default_dictionary, error) && fs::is_regular_file(default_language_model, error);
}

const std::vector<std::string> sentences = {
    "a gift of a flower will soon be made to you",
    "today is the first day of the rest of your life",
    "ships are safe in harbor but they were never meant to stay there",
};

// Three sentences spoken by flite's slt voice, written once for the whole
// suite into a temporary directory.
class FliteSpeech : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        flite_ = find_on_path("flite");
        if (flite_.empty() || !model_installed()) return;
        directory_ = fs::temp_directory_path() / ("cadenza_recognition_test_" + std::to_string(getpid()));
        fs::create_directories(directory_);
        for (size_t i = 0; i < sentences.size(); ++i) {
            const fs::path file = directory_ / ("sentence" + std::to_string(i) + ".wav");
            const std::string command = "'" + flite_ + "' -voice slt -t '" + sentences[i] + "' -o '" + file.string() + "'";
            ASSERT_EQ(std::system(command.c_str()), 0) << command;
            files_.push_back(file.string());
        }
    }
    static void TearDownTestSuite() {
        std::error_code error;
        if (!directory_.empty()) fs::remove_all(directory_, error);
    }
    void SetUp() override {
        if (flite_.empty()) GTEST_SKIP() << "the flite binary is not on PATH (Debian package flite)";
        if (!model_installed())
            GTEST_SKIP() << "the pocketsphinx model is not installed at " << default_model_directory
                         << " (Debian package pocketsphinx-en-us)";
    }

    static std::vector<ScoringItem> file_items() {
        std::vector<ScoringItem> items;
        for (size_t i = 0; i < files_.size(); ++i)
            items.push_back(ScoringItem::from_file("sentence" + std::to_string(i), files_[i], sentences[i], "slt"));
        return items;
    }

    static std::string flite_;
    static fs::path directory_;
    static std::vector<std::string> files_;
};

std::string FliteSpeech::flite_;
fs::path FliteSpeech::directory_;
std::vector<std::string> FliteSpeech::files_;

TEST_F(FliteSpeech, AggregateWordErrorRateIsBelowHalf) {
    TranscriptionOptions options;
    options.jobs = 2;
    std::vector<size_t> done;
    options.progress = [&done](const TranscriptionProgress& progress) {
        EXPECT_EQ(progress.total, sentences.size());
        done.push_back(progress.done);
    };
    const ErrorReport report = transcribe_and_score(file_items(), options);

    ASSERT_EQ(report.utterances.size(), sentences.size());
    for (size_t i = 0; i < sentences.size(); ++i) {
        EXPECT_EQ(report.utterances[i].id, "sentence" + std::to_string(i));  // input order
        EXPECT_EQ(report.utterances[i].reference, sentences[i]);
        EXPECT_GT(report.utterances[i].audio_seconds, 1.0);
        std::cout << "  reference:  " << sentences[i] << "\n  recognized: " << report.utterances[i].hypothesis << '\n';
    }
    EXPECT_EQ(done, (std::vector<size_t>{1, 2, 3}));
    EXPECT_EQ(report.jobs, 2);
    EXPECT_EQ(report.total.utterances, sentences.size());
    EXPECT_GT(report.total.words.reference_length, 25);
    EXPECT_LT(report.total.words.rate(), 0.5);
    EXPECT_LT(report.total.characters.rate(), 0.5);
    EXPECT_GT(report.total.recognition_seconds, 0.0);
    ASSERT_EQ(report.by_group.count("slt"), 1u);
    EXPECT_EQ(report.by_group.at("slt").words.errors(), report.total.words.errors());
}

TEST_F(FliteSpeech, SamplesInMemoryAtAnotherRateGiveTheFileResult) {
    // The same audio from memory at 22.05 kHz is resampled back to 16 kHz
    // and recognized like the file.
    const audio::Waveform waveform = audio::read_waveform(files_[0]);
    std::vector<float> samples = audio::resample(waveform.samples, waveform.sample_rate, 22050);
    const std::vector<ScoringItem> items = {
        ScoringItem::from_file("file", files_[0], sentences[0]),
        ScoringItem::from_samples("memory", std::move(samples), 22050, sentences[0])};
    const ErrorReport report = transcribe_and_score(items, TranscriptionOptions{});
    const UtteranceResult& from_file = report.utterances.at(0);
    const UtteranceResult& from_memory = report.utterances.at(1);
    EXPECT_EQ(from_memory.id, "memory");
    EXPECT_LE(word_errors(from_file.hypothesis, from_memory.hypothesis).errors(), 1)
        << from_file.hypothesis << " / " << from_memory.hypothesis;
    EXPECT_NEAR(from_memory.audio_seconds, waveform.duration_seconds(), 0.01);
}

TEST_F(FliteSpeech, RecognitionDoesNotDependOnWhatTheDecoderHeardBefore) {
    PocketsphinxRecognizer recognizer;
    const audio::Waveform first = audio::read_waveform(files_[0]);
    const audio::Waveform second = audio::read_waveform(files_[1]);
    const std::string alone = recognizer.transcribe(second.samples, second.sample_rate);
    recognizer.transcribe(first.samples, first.sample_rate);
    EXPECT_EQ(recognizer.transcribe(second.samples, second.sample_rate), alone);
}

TEST_F(FliteSpeech, SilenceGivesAnEmptyOrNearlyEmptyResult) {
    PocketsphinxRecognizer recognizer;
    const std::string silent = recognizer.transcribe(std::vector<float>(3 * 16000, 0.0f), 16000);
    EXPECT_LE(split_words(normalize_for_scoring(silent)).size(), 1u) << silent;
    EXPECT_EQ(recognizer.transcribe({}, 16000), "");
}

TEST(PocketsphinxRecognizer, MissingModelIsAnErrorNamingThePath) {
    RecognizerSettings settings;
    settings.model_directory = "/nonexistent/pocketsphinx/model";
    try {
        PocketsphinxRecognizer recognizer(settings);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("/nonexistent/pocketsphinx/model"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("acoustic model"), std::string::npos) << error.what();
    }
}

TEST(PocketsphinxRecognizer, MissingDefaultModelNamesThePackage) {
    RecognizerSettings settings;
    settings.language_model = "/usr/share/pocketsphinx/model/en-us/no-such.lm.bin";
    try {
        PocketsphinxRecognizer recognizer(settings);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("no-such.lm.bin"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("pocketsphinx-en-us"), std::string::npos) << error.what();
    }
}

TEST(PocketsphinxRecognizer, ModelWithoutMixtureWeightsIsAnErrorNotAnExit) {
    // pocketsphinx itself calls exit() when the mixture weights are missing.
    if (!model_installed()) GTEST_SKIP() << "the pocketsphinx model is not installed (Debian package pocketsphinx-en-us)";
    const fs::path directory = fs::temp_directory_path() / ("cadenza_incomplete_model_" + std::to_string(getpid()));
    fs::create_directories(directory);
    for (const auto& entry : fs::directory_iterator(default_model_directory))
        if (entry.path().filename() != "sendump" && entry.path().filename() != "mixture_weights")
            fs::create_symlink(entry.path(), directory / entry.path().filename());
    RecognizerSettings settings;
    settings.model_directory = directory.string();
    std::string message;
    try {
        PocketsphinxRecognizer recognizer(settings);
    } catch (const std::runtime_error& error) {
        message = error.what();
    }
    fs::remove_all(directory);
    EXPECT_NE(message.find((directory / "sendump").string()), std::string::npos) << message;
}

TEST(PocketsphinxRecognizer, SettingsThatCrashPocketsphinxAreErrorsBeforeIt) {
    // Each of these aborted, crashed or divided by zero inside pocketsphinx.
    if (!model_installed()) GTEST_SKIP() << "the pocketsphinx model is not installed (Debian package pocketsphinx-en-us)";
    const std::pair<const char*, const char*> cases[] = {
        {"-lw", "0"}, {"-lw", "abc"}, {"-maxwpf", "0"}, {"-ds", "0"}, {"-beam", "2"}, {"-lw", "nan"},
        {"-topn", "1.5"}, {"-bestpath", "maybe"}, {"-hmm", "/tmp"}, {"-nosuch", "1"}};
    for (const auto& [name, value] : cases) {
        RecognizerSettings settings;
        settings.decoder_settings = {{name, value}};
        try {
            PocketsphinxRecognizer recognizer(settings);
            ADD_FAILURE() << name << " " << value << " was accepted";
        } catch (const std::runtime_error& error) {
            EXPECT_NE(std::string(error.what()).find(name + 1), std::string::npos) << error.what();
        }
    }
    RecognizerSettings settings;
    settings.decoder_settings = {{"-lw", "5.5"}, {"-beam", "1e-60"}, {"-maxhmmpf", "-1"}, {"-bestpath", "no"}};
    PocketsphinxRecognizer recognizer(settings);
}

TEST(TranscriptionRun, UnreadableFileIsAnErrorNamingItAndTheUtterance) {
    if (!model_installed()) GTEST_SKIP() << "the pocketsphinx model is not installed (Debian package pocketsphinx-en-us)";
    const std::vector<ScoringItem> items = {ScoringItem::from_file("missing", "/nonexistent/audio.wav", "words")};
    try {
        transcribe_and_score(items, TranscriptionOptions{});
        FAIL() << "expected an error";
    } catch (const std::runtime_error& error) {
        EXPECT_NE(std::string(error.what()).find("/nonexistent/audio.wav"), std::string::npos) << error.what();
        EXPECT_NE(std::string(error.what()).find("'missing'"), std::string::npos) << error.what();
    }
}

}  // namespace
}  // namespace cadenza::recognition
