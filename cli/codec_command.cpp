#include "codec_command.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
#include <fstream>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "codec_resynthesis.h"
#include "engine.h"
#include "error.h"
#include "codes_file.h"
#include "exit_codes.h"
#include "torch_commands.h"
#include "pipeline_config.h"
#include "wav_file.h"

namespace cadenza::cli {
namespace {

nlohmann::json totals_json(const recognition::ErrorReport& report) {
    const auto& t = report.total;
    return {{"utterances", t.utterances},
            {"wer_percent", 100.0 * t.words.rate()},
            {"cer_percent", 100.0 * t.characters.rate()},
            {"word_errors", t.words.errors()},
            {"reference_words", t.words.reference_length},
            {"substitutions", t.words.substitutions},
            {"deletions", t.words.deletions},
            {"insertions", t.words.insertions}};
}

int run_evaluate(const evaluation::CodecResynthesisOptions& options_in, const std::string& json_file) {
    evaluation::CodecResynthesisOptions options = options_in;
    options.progress = [](const std::string& line) { std::cerr << "codec evaluate: " << line << '\n'; };
    const auto report = evaluation::evaluate_codec_resynthesis(options);
    const double original = 100.0 * report.original.total.words.rate();
    const double vocoded = 100.0 * report.mel_vocoded.total.words.rate();
    const double resynthesized = 100.0 * report.resynthesized.total.words.rate();
    std::printf("%-34s %7s %7s %8s\n", "audio (pocketsphinx)", "WER %", "CER %", "words");
    auto row = [](const char* name, const recognition::ErrorReport& r) {
        std::printf("%-34s %7.1f %7.1f %8lld\n", name, 100.0 * r.total.words.rate(), 100.0 * r.total.characters.rate(),
                    static_cast<long long>(r.total.words.reference_length));
    };
    row("original audio", report.original);
    row("original log-mel + Griffin-Lim", report.mel_vocoded);
    row("codec resynthesis + Griffin-Lim", report.resynthesized);
    std::printf("gap to the vocoded mel: %+.1f points (gate <= 5); to the original audio: %+.1f points (gate <= 12)\n",
                resynthesized - vocoded, resynthesized - original);
    std::printf("%zu utterances, %.1f s of audio; %lld of %lld codes used\n", report.original.total.utterances,
                report.audio_seconds, static_cast<long long>(report.distinct_codes),
                static_cast<long long>(report.codebook_size));
    std::printf("one thread: encode %.1fx real time, decode %.1fx real time (Griffin-Lim %.0f%% of it)\n",
                report.audio_seconds / report.encode_seconds, report.audio_seconds / report.decode_seconds,
                100.0 * report.vocoder_seconds / report.decode_seconds);
    if (!json_file.empty()) {
        nlohmann::json json = {
            {"model", options.model.string()},
            {"manifest", options.manifest.string()},
            {"split", options.split},
            {"griffin_lim_iterations", options.griffin_lim_iterations},
            {"griffin_lim_power", options.griffin_lim_power},
            {"audio_seconds", report.audio_seconds},
            {"encode_real_time_multiple", report.audio_seconds / report.encode_seconds},
            {"decode_real_time_multiple", report.audio_seconds / report.decode_seconds},
            {"distinct_codes", report.distinct_codes},
            {"codebook_size", report.codebook_size},
            {"original", totals_json(report.original)},
            {"mel_vocoded", totals_json(report.mel_vocoded)},
            {"resynthesized", totals_json(report.resynthesized)}};
        std::ofstream out(json_file);
        if (!out) throw Error(CDZ_STATUS_IO_ERROR, json_file + ": cannot write");
        out << json.dump(2) << '\n';
    }
    return exit_ok;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct CodingOptions {
    std::string pipeline, input, output;
};

std::unique_ptr<Engine> load_codec(const std::string& pipeline) {
    auto engine = std::make_unique<Engine>(load_pipeline_config_file(pipeline));
    if (!engine->has_codec()) throw Error(CDZ_STATUS_INVALID_CONFIG, pipeline + ": no [codec] table");
    return engine;
}

int run_encode(const CodingOptions& o) {
    const auto codec_engine = load_codec(o.pipeline);
    Engine& engine = *codec_engine;
    const audio::Waveform wave = audio::read_waveform(o.input);
    const auto start = Clock::now();
    const Engine::Codes codes = engine.encode_audio(wave.samples, wave.sample_rate);
    const double seconds = seconds_since(start);
    const cdz_codec_info info = engine.codec_info();
    codes_file::write_codes(o.output, codes, {o.pipeline, info.sample_rate, info.frame_rate});
    std::printf("%s: %.2f s of audio -> %lld x %lld codes in %.3f s (%.1fx real time) -> %s\n", o.input.c_str(),
                wave.duration_seconds(), static_cast<long long>(codes.codebooks), static_cast<long long>(codes.frames),
                seconds, wave.duration_seconds() / std::max(seconds, 1e-9), o.output.c_str());
    return exit_ok;
}

int run_decode(const CodingOptions& o) {
    const auto codec_engine = load_codec(o.pipeline);
    Engine& engine = *codec_engine;
    const Engine::Codes codes = codes_file::read_codes(o.input);
    const auto start = Clock::now();
    const std::vector<float> samples = engine.decode_audio(codes);
    const double seconds = seconds_since(start);
    const int rate = static_cast<int>(engine.codec_info().sample_rate);
    audio::write_waveform(o.output, audio::Waveform{samples, rate});
    const double duration = static_cast<double>(samples.size()) / rate;
    std::printf("%s: %lld x %lld codes -> %.2f s of audio in %.3f s (%.1fx real time) -> %s\n", o.input.c_str(),
                static_cast<long long>(codes.codebooks), static_cast<long long>(codes.frames), duration, seconds,
                duration / std::max(seconds, 1e-9), o.output.c_str());
    return exit_ok;
}

int run_roundtrip(const CodingOptions& o) {
    const auto codec_engine = load_codec(o.pipeline);
    Engine& engine = *codec_engine;
    const audio::Waveform wave = audio::read_waveform(o.input);
    auto start = Clock::now();
    const Engine::Codes codes = engine.encode_audio(wave.samples, wave.sample_rate);
    const double encode_seconds = seconds_since(start);
    start = Clock::now();
    const std::vector<float> samples = engine.decode_audio(codes);
    const double decode_seconds = seconds_since(start);
    const int rate = static_cast<int>(engine.codec_info().sample_rate);
    audio::write_waveform(o.output, audio::Waveform{samples, rate});
    std::printf("%s: %.2f s of audio, %lld x %lld codes; encode %.1fx real time, decode %.1fx real time -> %s\n",
                o.input.c_str(), wave.duration_seconds(), static_cast<long long>(codes.codebooks),
                static_cast<long long>(codes.frames), wave.duration_seconds() / std::max(encode_seconds, 1e-9),
                wave.duration_seconds() / std::max(decode_seconds, 1e-9), o.output.c_str());
    return exit_ok;
}

}  // namespace

Command add_codec_command(CLI::App& app) {
    auto* codec = app.add_subcommand("codec", torch_command_description("codec"));
    codec->require_subcommand(1);
    std::vector<std::pair<CLI::App*, std::function<int()>>> runs;
    struct Verb {
        const char* name;
        const char* description;
        const char* input;
        const char* output;
        int (*run)(const CodingOptions&);
    };
    const Verb verbs[] = {
        {"encode", "audio file -> codes (.safetensors)", "audio file", "codes file to write (.safetensors)", run_encode},
        {"decode", "codes (.safetensors) -> WAV", "codes file (.safetensors)", "WAV file to write", run_decode},
        {"roundtrip", "audio file -> codes -> WAV", "audio file", "WAV file to write", run_roundtrip},
    };
    for (const Verb& verb : verbs) {
        auto options = std::make_shared<CodingOptions>();
        auto* command = codec->add_subcommand(verb.name, verb.description);
        command->add_option("-p,--pipeline", options->pipeline, "pipeline file with a [codec] table")
            ->required()
            ->check(CLI::ExistingFile);
        command->add_option("input", options->input, verb.input)->required()->check(CLI::ExistingFile);
        command->add_option("-o,--output", options->output, verb.output)->required();
        runs.emplace_back(command, [options, run = verb.run] { return run(*options); });
    }
    auto options = std::make_shared<evaluation::CodecResynthesisOptions>();
    auto json_file = std::make_shared<std::string>();
    auto* evaluate = codec->add_subcommand(
        "evaluate", "pocketsphinx WER of original audio, original log-mel + Griffin-Lim, and codec resynthesis");
    evaluate->add_option("--model", options->model, "mel-FSQ codec (.safetensors)")->required()->check(CLI::ExistingFile);
    evaluate->add_option("--manifest", options->manifest, "speech corpus manifest.tsv")->required()->check(CLI::ExistingFile);
    evaluate->add_option("--split", options->split, "train, dev or test (default test)")
        ->check(CLI::IsMember({"train", "dev", "test"}));
    evaluate->add_option("--limit", options->limit, "utterances, spread over the split; 0: all (default 100)")
        ->check(CLI::NonNegativeNumber);
    evaluate->add_option("--griffin-lim-iterations", options->griffin_lim_iterations, "(default 32)")
        ->check(CLI::Range(1, 1000));
    evaluate->add_option("--griffin-lim-power", options->griffin_lim_power, "(default 1.0)")->check(CLI::Range(0.5, 3.0));
    evaluate->add_option("--jobs", options->jobs, "recognition threads; 0: one per core")->check(CLI::NonNegativeNumber);
    evaluate->add_option("--write-audio", options->write_audio, "write each resynthesis as WAV into this directory");
    evaluate->add_option("--json", *json_file, "also write the figures as JSON");
    return {codec, [=] {
                if (evaluate->parsed()) return run_evaluate(*options, *json_file);
                for (const auto& [command, run] : runs)
                    if (command->parsed()) return run();
                return static_cast<int>(exit_internal_error);
            }};
}

}  // namespace cadenza::cli
