#include "wer_command.h"


#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "corpus_manifest.h"
#include "edit_counts_json.h"
#include "error.h"
#include "exit_codes.h"
#include "recognition_progress.h"
#include "transcribe_command.h"
#include "transcription_run.h"

namespace cadenza::cli {
namespace {

using recognition::EditCounts;
using recognition::ErrorReport;
using recognition::ErrorTotals;

struct WerOptions {
    std::string manifest;
    std::string split = "test";
    size_t limit = 0;
    std::string json_file;
    bool by_voice = false;
    bool quiet = false;
    recognition::TranscriptionOptions run;
};

std::string format(const char* format, double a, double b = 0.0, double c = 0.0) {
    char text[128];
    std::snprintf(text, sizeof(text), format, a, b, c);
    return text;
}

std::string counts_text(const EditCounts& counts, const char* unit) {
    return format("%6.2f %%", 100.0 * counts.rate()) + "  (" + std::to_string(counts.errors()) + " errors / " +
           std::to_string(counts.reference_length) + " reference " + unit + ": " +
           std::to_string(counts.substitutions) + " substitutions, " + std::to_string(counts.deletions) +
           " deletions, " + std::to_string(counts.insertions) + " insertions)";
}

// The `limit` utterances whose ids hash lowest (FNV-1a), in manifest order:
// reproducible, spread over voices and sentences however the manifest is
// sorted, and a smaller limit picks a subset of a larger one.
std::vector<speech_corpus::Utterance> hashed_sample(const std::vector<speech_corpus::Utterance>& utterances,
                                                    size_t limit) {
    auto fnv1a = [](const std::string& text) {
        uint64_t hash = 14695981039346656037ull;
        for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
        return hash;
    };
    std::vector<std::pair<uint64_t, size_t>> order;
    for (size_t i = 0; i < utterances.size(); ++i) order.emplace_back(fnv1a(utterances[i].id), i);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(limit), order.end());
    std::vector<size_t> chosen;
    for (size_t k = 0; k < limit; ++k) chosen.push_back(order[k].second);
    std::sort(chosen.begin(), chosen.end());
    std::vector<speech_corpus::Utterance> sample;
    for (const size_t i : chosen) sample.push_back(utterances[i]);
    return sample;
}

void print_report(const WerOptions& options, const ErrorReport& report) {
    const ErrorTotals& t = report.total;
    std::cout << "corpus   " << options.manifest << ", split " << options.split << ": " << t.utterances
              << " utterances, " << format("%.3f", t.audio_seconds / 3600.0) << " h of audio\n";
    std::cout << "WER      " << counts_text(t.words, "words") << '\n';
    std::cout << "CER      " << counts_text(t.characters, "characters") << '\n';
    std::cout << "speed    " << format("%.3f", t.real_time_factor()) << " x real time per thread (CPU time), "
              << report.jobs << (report.jobs == 1 ? " job: " : " jobs: ") << format("%.1f", report.wall_seconds)
              << " s wall (" << format("%.3f", t.audio_seconds > 0 ? report.wall_seconds / t.audio_seconds : 0.0)
              << " x real time)\n";
    if (!options.by_voice) return;
    std::cout << "\nvoice                             utts   words   WER %     S     D     I   CER %   audio h     xRT\n";
    for (const auto& [voice, v] : report.by_group) {
        char line[256];
        std::snprintf(line, sizeof(line), "%-32s %5zu %7lld %7.2f %5lld %5lld %5lld %7.2f %9.3f %7.3f\n",
                      voice.c_str(), v.utterances, static_cast<long long>(v.words.reference_length),
                      100.0 * v.words.rate(), static_cast<long long>(v.words.substitutions),
                      static_cast<long long>(v.words.deletions), static_cast<long long>(v.words.insertions),
                      100.0 * v.characters.rate(), v.audio_seconds / 3600.0, v.real_time_factor());
        std::cout << line;
    }
}


nlohmann::json totals_json(const ErrorTotals& totals) {
    return {{"utterances", totals.utterances},
            {"words", edit_counts_json(totals.words)},
            {"characters", edit_counts_json(totals.characters)},
            {"audio_seconds", totals.audio_seconds},
            {"recognition_cpu_seconds", totals.recognition_seconds},
            {"real_time_factor", totals.real_time_factor()}};
}

nlohmann::json report_json(const WerOptions& options, const ErrorReport& report) {
    const auto& recognizer = options.run.recognizer;
    nlohmann::json settings = nlohmann::json::object();
    for (const auto& [name, value] : recognizer.decoder_settings) settings[name] = value;
    nlohmann::json json = {{"manifest", options.manifest},
                           {"split", options.split},
                           {"limit", options.limit},
                           {"recognizer",
                            {{"model", recognizer.model_directory},
                             {"dictionary", recognizer.dictionary},
                             {"language_model", recognizer.language_model},
                             {"decoder_settings", settings}}},
                           {"jobs", report.jobs},
                           {"wall_seconds", report.wall_seconds},
                           {"total", totals_json(report.total)}};
    json["by_voice"] = nlohmann::json::object();
    for (const auto& [voice, totals] : report.by_group) json["by_voice"][voice] = totals_json(totals);
    json["utterances"] = nlohmann::json::array();
    for (const auto& u : report.utterances)
        json["utterances"].push_back({{"id", u.id},
                                      {"voice", u.group},
                                      {"reference", u.reference},
                                      {"hypothesis", u.hypothesis},
                                      {"words", edit_counts_json(u.words)},
                                      {"characters", edit_counts_json(u.characters)},
                                      {"audio_seconds", u.audio_seconds},
                                      {"recognition_cpu_seconds", u.recognition_seconds}});
    return json;
}

int run_wer(WerOptions options) {
    std::vector<speech_corpus::Utterance> utterances;
    try {
        utterances = speech_corpus::select_split(speech_corpus::read_corpus_manifest(options.manifest), options.split);
    } catch (const std::runtime_error& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
    if (utterances.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.manifest + ": no utterances in split '" + options.split + "'");
    if (options.limit > 0 && utterances.size() > options.limit) utterances = hashed_sample(utterances, options.limit);

    std::vector<recognition::ScoringItem> items;
    items.reserve(utterances.size());
    for (const auto& u : utterances) items.push_back(recognition::ScoringItem::from_file(u.id, u.path, u.text, u.voice));
    if (!options.quiet) options.run.progress = recognition_progress_printer("wer");
    ErrorReport report;
    try {
        report = recognition::transcribe_and_score(items, options.run);
    } catch (const std::runtime_error& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
    print_report(options, report);
    if (!options.json_file.empty()) {
        std::ofstream json(options.json_file);
        if (!json) throw Error(CDZ_STATUS_IO_ERROR, options.json_file + ": cannot write");
        json << report_json(options, report).dump(2) << '\n';
        if (!json.flush()) throw Error(CDZ_STATUS_IO_ERROR, options.json_file + ": writing failed");
        std::cerr << "wrote " << options.json_file << '\n';
    }
    return exit_ok;
}

}  // namespace

Command add_wer_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "wer", "word and character error rates of pocketsphinx on a speech corpus split, against its texts");
    auto options = std::make_shared<WerOptions>();
    options->run.jobs = 0;
    command->add_option("--manifest", options->manifest, "the corpus manifest (manifest.tsv)")->required();
    command->add_option("--split", options->split, "train, dev or test (default test)")
        ->check(CLI::IsMember({"train", "dev", "test"}));
    command->add_option("--limit", options->limit, "only N utterances of the split: a fixed sample spread over voices (those whose ids hash lowest)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--jobs,-j", options->run.jobs, "worker threads, each with its own decoder (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--json", options->json_file, "also write every figure and every utterance's result here");
    command->add_flag("--by-voice", options->by_voice, "also print the figures of each voice");
    command->add_flag("--quiet,-q", options->quiet, "no progress on standard error");
    add_recognizer_options(command, options->run.recognizer);
    return {command, [options] { return run_wer(*options); }};
}

}  // namespace cadenza::cli
