#include "synth_command.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "pipeline_config.h"
#include "wav_file.h"

namespace cadenza::cli {
namespace {

struct SynthOptions {
    std::string pipeline, text, output, voice;
    std::optional<uint64_t> seed;
    double max_seconds = 0.0;
    bool stream = false;
};

int run_synth(const SynthOptions& o) {
    using Clock = std::chrono::steady_clock;
    const auto load_start = Clock::now();
    Engine engine(load_pipeline_config_file(o.pipeline));
    const double load_seconds = std::chrono::duration<double>(Clock::now() - load_start).count();

    SynthesisRequest request;
    request.text = o.text;
    request.seed = o.seed;
    request.max_audio_seconds = o.max_seconds;
    if (!o.voice.empty()) {
        audio::Waveform prompt = audio::read_waveform(o.voice);
        if (prompt.samples.empty())
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, o.voice + ": the voice file has no samples");
        request.voice_prompt = std::move(prompt.samples);
        request.voice_prompt_sample_rate = prompt.sample_rate;
    }
    std::vector<float> samples;
    std::optional<double> first_audio_seconds;
    const auto start = Clock::now();
    if (o.stream) {
        request.on_audio = [&](const float* chunk, size_t count) {
            if (!first_audio_seconds) first_audio_seconds = std::chrono::duration<double>(Clock::now() - start).count();
            samples.insert(samples.end(), chunk, chunk + count);
            return true;
        };
        engine.synthesize(request);
    } else {
        samples = engine.synthesize(request);
        first_audio_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    audio::write_waveform(o.output, audio::Waveform{samples, static_cast<int>(engine.sample_rate())});

    const DecodingStats& stats = engine.stats();
    const double audio_seconds = static_cast<double>(samples.size()) / engine.sample_rate();
    std::printf("wrote %s: %.2f s of audio at %u Hz\n", o.output.c_str(), audio_seconds, engine.sample_rate());
    std::printf("pipeline %s loaded in %.2f s\n", o.pipeline.c_str(), load_seconds);
    std::printf("tokens %lld | steps %lld | mean accepted length %.2f tokens/step | target passes %lld | draft passes %lld\n",
                static_cast<long long>(stats.tokens_generated()), static_cast<long long>(stats.steps()),
                stats.mean_accepted_length(), static_cast<long long>(stats.target_passes()),
                static_cast<long long>(stats.draft_passes()));
    const double loop_seconds = stats.draft_seconds + stats.verify_seconds + stats.accept_seconds;
    std::printf("decoding %.1f tokens/s (draft %.2f s, verify %.2f s, accept %.2f s) | synthesis %.2f s | real-time "
                "factor %.3f (%.2fx real time) | first audio after %.2f s%s\n",
                seconds > 0 ? stats.tokens_generated() / std::max(loop_seconds, 1e-9) : 0.0, stats.draft_seconds,
                stats.verify_seconds, stats.accept_seconds, seconds, audio_seconds > 0 ? seconds / audio_seconds : 0.0,
                seconds > 0 ? audio_seconds / seconds : 0.0, first_audio_seconds.value_or(seconds),
                o.stream ? " (streamed)" : " (whole; --stream for chunks)");
    return exit_ok;
}

// CLI11 reads "-1" into an unsigned seed as 2^64-1 and clamps larger numbers.
const CLI::Validator seed_text(
    [](const std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && (text.size() < 20 || text <= "18446744073709551615")) return {};
        return "a seed is a whole number from 0 to 18446744073709551615, not '" + text + "'";
    },
    "SEED");

const CLI::Validator finite_non_negative(
    [](const std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (!text.empty() && *end == '\0' && std::isfinite(value) && value >= 0) return {};
        return "expected a finite number >= 0, not '" + text + "'";
    },
    "SECONDS");

}  // namespace

Command add_synth_command(CLI::App& app) {
    auto options = std::make_shared<SynthOptions>();
    auto* synth = app.add_subcommand("synth", "synthesize a text to a WAV file and print the run's statistics");
    synth->add_option("-p,--pipeline", options->pipeline,
                      "pipeline file (.toml), or a shipped pipeline's name (default, ar, ...)")
        ->required();
    synth->add_option("-t,--text", options->text, "the text to speak")->required();
    synth->add_option("-o,--output", options->output, "WAV file to write")->required();
    synth->add_option("--voice", options->voice, "audio file of the voice to imitate (default: the pipeline's)")
        ->check(CLI::ExistingFile);
    synth->add_option("--seed", options->seed, "seed of the synthesis, 0 to 2^64-1 (default: the pipeline's)")
        ->check(seed_text);
    synth->add_option("--max-seconds", options->max_seconds, "stop after this much audio (default: the pipeline's)")
        ->check(finite_non_negative);
    synth->add_flag("--stream", options->stream, "decode audio in chunks as tokens arrive");
    return {synth, [options] { return run_synth(*options); }};
}

}  // namespace cadenza::cli
