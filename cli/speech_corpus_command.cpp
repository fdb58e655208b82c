#include "speech_corpus_command.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "exit_codes.h"
#include "generation_progress.h"
#include "speech_corpus_builder.h"

namespace cadenza::cli {
namespace {

using speech_corpus::CorpusSummary;
using speech_corpus::SpeechCorpusOptions;

// The command as given, with defaults filled in, for corpus.json.
std::string command_line(const SpeechCorpusOptions& o) {
    std::ostringstream line;
    line << "cadenza corpus speech --output " << o.output << " --train-hours " << o.train_hours << " --jobs " << o.jobs
         << " --seed " << o.seed << " --variations " << o.variations_per_voice << " --fortunes " << o.fortunes_directory;
    if (o.limit_sentences > 0) line << " --limit-sentences " << o.limit_sentences;
    if (!o.voices.empty()) line << " --voices " << o.voices;
    if (o.prune) line << " --prune";
    return line.str();
}

void print_summary(const SpeechCorpusOptions& options, const CorpusSummary& summary) {
    const auto& g = summary.generation;
    char line[512];
    std::snprintf(line, sizeof(line),
                  "wrote %s: %zu utterances (%zu made now, %zu already there, %zu failed) in %s; "
                  "%.2f h of audio made at %.1fx real time\n",
                  options.output.c_str(), g.reused + g.generated, g.generated, g.reused, g.failed,
                  speech_corpus::format_duration(g.wall_seconds).c_str(), g.generated_audio_seconds / 3600.0,
                  g.wall_seconds > 0 ? g.generated_audio_seconds / g.wall_seconds : 0.0);
    std::cout << line;
    std::cout << "split   sentences  utterances    hours\n";
    for (const char* split : {"train", "dev", "test"}) {
        const auto totals = summary.by_split.count(split) ? summary.by_split.at(split) : speech_corpus::SpeechTotals{};
        const size_t sentences =
            summary.spoken_sentences_by_split.count(split) ? summary.spoken_sentences_by_split.at(split) : 0;
        std::snprintf(line, sizeof(line), "%-7s %9zu %11zu %8.2f\n", split, sentences, totals.utterances, totals.hours());
        std::cout << line;
    }
    std::cout << "voice                             train h   dev h  test h\n";
    for (const auto& voice : summary.voices) {
        double hours[3] = {0, 0, 0};
        int column = 0;
        for (const char* split : {"train", "dev", "test"}) {
            const auto found = summary.by_voice_and_split.find(voice.voice.name);
            if (found != summary.by_voice_and_split.end() && found->second.count(split))
                hours[column] = found->second.at(split).hours();
            ++column;
        }
        std::snprintf(line, sizeof(line), "%-32s %8.2f %7.2f %7.2f\n", voice.voice.name.c_str(), hours[0], hours[1],
                      hours[2]);
        std::cout << line;
    }
    for (const auto& error : g.errors) std::cout << "failed: " << error << '\n';
}

}  // namespace

std::pair<CLI::App*, std::function<int()>> add_speech_corpus_subcommand(CLI::App& corpus) {
    auto options = std::make_shared<SpeechCorpusOptions>();
    options->jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    auto* speech = corpus.add_subcommand(
        "speech", "an English speech corpus: fortune sentences spoken by flite's and festival's voices");
    speech->add_option("--output", options->output, "the corpus directory (manifest.tsv, sentences.tsv, corpus.json, wav/)")
        ->required();
    speech->add_option("--train-hours", options->train_hours, "hours of training audio (default 10)")
        ->check(CLI::NonNegativeNumber);
    speech->add_option("--jobs", options->jobs, "worker processes (default: the number of cores)")
        ->check(CLI::PositiveNumber);
    speech->add_option("--seed", options->seed, "seed of the voices' variations (default 1)");
    speech->add_option("--voices", options->voices,
                       "comma-separated voices, e.g. flite.slt,festival.kal_diphone (default: every installed one)");
    speech->add_option("--limit-sentences", options->limit_sentences,
                       "at most N sentences per split (small runs and tests)")
        ->check(CLI::PositiveNumber);
    speech->add_option("--variations", options->variations_per_voice, "rate and pitch variations per voice (default 4)")
        ->check(CLI::Range(1, 64));
    speech->add_flag("--prune", options->prune,
                     "delete WAV files under <output>/wav that this corpus does not hold (left by other options)");
    speech->add_option("--fortunes", options->fortunes_directory,
                       "the directory of fortune files (default /usr/share/games/fortunes)");

    return {speech, [options] {
                options->command_line = command_line(*options);
                options->log = &std::cerr;
                options->log_is_terminal = isatty(STDERR_FILENO) != 0;
                try {
                    print_summary(*options, speech_corpus::build_speech_corpus(*options));
                } catch (const std::invalid_argument& error) {
                    std::cerr << "cadenza: error: " << error.what() << '\n';
                    return static_cast<int>(exit_user_error);
                }
                return static_cast<int>(exit_ok);
            }};
}

}  // namespace cadenza::cli
