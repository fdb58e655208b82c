#include "target_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "edit_counts_json.h"
#include "error.h"
#include "exit_codes.h"
#include "torch_commands.h"
#include "teacher_forced_target.h"

namespace cadenza::cli {
namespace {

nlohmann::json totals_json(const recognition::ErrorReport& report) {
    return {{"utterances", report.total.utterances},
            {"words", edit_counts_json(report.total.words)},
            {"characters", edit_counts_json(report.total.characters)}};
}

void print_row(const char* name, const recognition::ErrorReport& r) {
    std::printf("%-42s %7.1f %7.1f %8lld\n", name, 100.0 * r.total.words.rate(), 100.0 * r.total.characters.rate(),
                static_cast<long long>(r.total.words.reference_length));
}

int run_evaluate(evaluation::TeacherForcedOptions options, const std::string& json_file) {
    options.progress = [](const std::string& line) { std::cerr << "target evaluate: " << line << '\n'; };
    const auto report = evaluation::evaluate_teacher_forced(options);
    std::printf("%lld frames: cross-entropy %.4f nats/code, accuracy %.2f%%\n", static_cast<long long>(report.frames),
                report.cross_entropy, 100.0 * report.accuracy);
    std::printf("FSQ latent L1 distance per frame: most likely code %.3f, previous true code %.3f\n",
                report.latent_distance, report.previous_code_distance);
    std::printf("%-42s %7s %7s %8s\n", "audio (pocketsphinx)", "WER %", "CER %", "words");
    print_row("original audio", report.original);
    print_row("true codes + Griffin-Lim", report.true_codes);
    print_row("teacher-forced most likely codes + G-L", report.predicted_codes);
    if (!json_file.empty()) {
        const nlohmann::json json = {{"target", options.target.string()},
                                     {"tokens", options.tokens.string()},
                                     {"frames", report.frames},
                                     {"cross_entropy_nats_per_code", report.cross_entropy},
                                     {"accuracy", report.accuracy},
                                     {"latent_l1_distance", report.latent_distance},
                                     {"previous_code_latent_l1_distance", report.previous_code_distance},
                                     {"original", totals_json(report.original)},
                                     {"true_codes", totals_json(report.true_codes)},
                                     {"teacher_forced_codes", totals_json(report.predicted_codes)}};
        std::ofstream out(json_file);
        if (!out) throw Error(CDZ_STATUS_IO_ERROR, json_file + ": cannot write");
        out << json.dump(2) << '\n';
    }
    return exit_ok;
}

}  // namespace

Command add_target_command(CLI::App& app) {
    auto* target = app.add_subcommand("target", torch_command_description("target"));
    target->require_subcommand(1);
    auto options = std::make_shared<evaluation::TeacherForcedOptions>();
    auto json_file = std::make_shared<std::string>();
    auto* evaluate = target->add_subcommand(
        "evaluate", "feed the target true sequences; decode its most likely codes; pocketsphinx WER beside the true codes'");
    evaluate->add_option("--target", options->target, "model directory (config.json, model.safetensors)")
        ->required()
        ->check(CLI::ExistingDirectory);
    evaluate->add_option("--codec", options->codec, "mel-FSQ codec (.safetensors)")->required()->check(CLI::ExistingFile);
    evaluate->add_option("--tokens", options->tokens, "a split's token corpus (corpus tts: dev.tokens)")
        ->required()
        ->check(CLI::ExistingFile);
    evaluate->add_option("--prompts", options->prompts, "its prompts file (dev_prompts.tsv): row k names line k")
        ->required()
        ->check(CLI::ExistingFile);
    evaluate->add_option("--layout", options->layout, "layout.json")->required()->check(CLI::ExistingFile);
    evaluate->add_option("--manifest", options->manifest, "speech corpus manifest.tsv")->required()->check(CLI::ExistingFile);
    evaluate->add_option("--limit", options->limit, "the first N sequences; 0: all (default 20)")
        ->check(CLI::NonNegativeNumber);
    evaluate->add_option("--threads", options->threads, "threads of the target and codec (default 1)")
        ->check(CLI::PositiveNumber);
    evaluate->add_option("--jobs", options->jobs, "recognition threads; 0: one per core")->check(CLI::NonNegativeNumber);
    evaluate->add_option("--write-audio", options->write_audio, "write each decoding as WAV into this directory");
    evaluate->add_option("--json", *json_file, "also write the figures as JSON");
    return {target, [=] { return run_evaluate(*options, *json_file); }};
}

}  // namespace cadenza::cli
