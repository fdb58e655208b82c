#include "transcribe_command.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "decoder_settings.h"
#include "error.h"
#include "exit_codes.h"
#include "transcription_run.h"

namespace cadenza::cli {
namespace {

struct TranscribeOptions {
    std::vector<std::string> files;
    recognition::TranscriptionOptions run;
};

int run_transcribe(const TranscribeOptions& options) {
    std::vector<recognition::ScoringItem> items;
    for (const auto& file : options.files) items.push_back(recognition::ScoringItem::from_file(file, file, ""));
    std::vector<recognition::UtteranceResult> results;
    try {
        results = recognition::transcribe_all(items, options.run);
    } catch (const std::runtime_error& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
    for (const auto& result : results) {
        const double speed = result.audio_seconds > 0 ? result.recognition_seconds / result.audio_seconds : 0.0;
        char figures[96];
        std::snprintf(figures, sizeof(figures), "%.2f s\t%.3f x real time", result.audio_seconds, speed);
        std::cout << result.id << '\t' << result.hypothesis << '\t' << figures << '\n';
    }
    return exit_ok;
}

}  // namespace

void add_recognizer_options(CLI::App* command, recognition::RecognizerSettings& settings) {
    command->add_option("--model", settings.model_directory, "pocketsphinx acoustic model directory (default " +
                                                                 std::string(recognition::default_model_directory) + ")");
    command->add_option("--dictionary", settings.dictionary, "pronunciation dictionary (default " +
                                                                 std::string(recognition::default_dictionary) + ")");
    command->add_option("--language-model", settings.language_model,
                        "n-gram language model (default " + std::string(recognition::default_language_model) + ")");
    command
        ->add_option_function<std::vector<std::string>>(
            "--decoder-setting",
            [&settings](const std::vector<std::string>& values) {
                for (const auto& value : values) {
                    const size_t equals = value.find('=');
                    if (equals == std::string::npos || equals == 0)
                        throw CLI::ValidationError("--decoder-setting", "expected NAME=VALUE, e.g. beam=1e-60, not '" +
                                                                            value + "'");
                    std::string name = value.substr(0, equals);
                    try {
                        recognition::check_decoder_setting(name, value.substr(equals + 1));
                    } catch (const std::invalid_argument& error) {
                        throw CLI::ValidationError("--decoder-setting", error.what());
                    }
                    if (name[0] != '-') name = "-" + name;
                    settings.decoder_settings.emplace_back(name, value.substr(equals + 1));
                }
            },
            "a pocketsphinx setting NAME=VALUE (e.g. lw=5.5) instead of its default; repeatable")
        ->allow_extra_args(false);
}

Command add_transcribe_command(CLI::App& app) {
    auto* command = app.add_subcommand("transcribe", "transcribe audio files with pocketsphinx (US English)");
    auto options = std::make_shared<TranscribeOptions>();
    command->add_option("files", options->files, "audio files (any format libsndfile reads, any sample rate)")
        ->required();
    command->add_option("--jobs,-j", options->run.jobs, "worker threads, each with its own decoder (default 1; 0: one per core)")
        ->check(CLI::NonNegativeNumber);
    add_recognizer_options(command, options->run.recognizer);
    return {command, [options] { return run_transcribe(*options); }};
}

}  // namespace cadenza::cli
