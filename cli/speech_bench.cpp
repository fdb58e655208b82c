#include "speech_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include "bench_costs.h"
#include "bench_plot.h"
#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "pipeline_config.h"
#include "progress.h"
#include "recognition_progress.h"
#include "speech_bench_report.h"
#include "wav_file.h"

namespace cadenza::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What a pipeline said, kept until every pipeline is timed.
struct PipelineAudio {
    std::vector<std::vector<float>> sentences;
    int sample_rate = 0;
};

// Everything that could fail after an hour of synthesis is checked first:
// the output directories, gnuplot, the recognizer's model files.
void check_before_running(const SpeechBenchOptions& options) {
    for (const std::string* file : {&options.json_file, &options.csv_file, &options.plot_file}) {
        if (file->empty()) continue;
        const auto directory = std::filesystem::absolute(*file).parent_path();
        if (!std::filesystem::is_directory(directory))
            throw Error(CDZ_STATUS_NOT_FOUND, *file + ": the directory " + directory.string() + " does not exist");
    }
    if (!options.plot_file.empty()) require_gnuplot();
    try {
        recognition::PocketsphinxRecognizer check(options.recognition.recognizer);
    } catch (const std::runtime_error& error) {
        throw Error(CDZ_STATUS_NOT_FOUND, error.what());
    }
}

// One sentence through one pipeline: what the bench keeps of it.
struct TimedSentence {
    SentenceSynthesis synthesis;
    DecodingStats stats;  // empty when it failed
    std::vector<float> samples;
};

// A sentence's failure on standard error, as it happens.
void report_failure(const std::string& file, const SpeechSentence& sentence, const SentenceFailure& failure) {
    std::cerr << "\n"
              << (failure.internal ? "cadenza: internal error (a bug; please report it): " : "cadenza: sentence failed: ")
              << file << ": sentence '" << sentence.id << "' (" << sentence.where << "): " << failure.message << "\n";
}

// Synthesis `item` is sentence item % N's with seed + item (N sentences).
TimedSentence time_sentence(Engine& engine, const std::string& file, const SpeechSentenceSet& set, size_t item,
                            const SpeechBenchOptions& options, int sample_rate) {
    const SpeechSentence& sentence = set.sentences[item % set.sentences.size()];
    const bool streams = engine.has_codec() && engine.codec_info().can_stream;
    SynthesisRequest request;
    request.text = sentence.text;
    request.seed = options.seed + item;
    request.voice_prompt = sentence.voice_prompt;
    request.voice_prompt_sample_rate = set.prompt_sample_rate;
    TimedSentence timed;
    std::optional<double> first_audio_seconds;
    const auto start = Clock::now();
    if (!options.audio_after_loop)
        request.on_audio = [&](const float* chunk, size_t count) {
            if (!first_audio_seconds) first_audio_seconds = seconds_since(start);
            timed.samples.insert(timed.samples.end(), chunk, chunk + count);
            return true;
        };
    SentenceSynthesis& synthesis = timed.synthesis;
    try {
        if (options.audio_after_loop)
            timed.samples = engine.synthesize(request);  // the whole audio, decoded once the loop is done
        else
            engine.synthesize(request);
    } catch (const std::exception& error) {
        // Recorded, reported and counted as all words deleted; the run goes on.
        synthesis.failure = SentenceFailure{error.what(), is_internal_error(error)};
        report_failure(file, sentence, *synthesis.failure);
        timed.samples.clear();
        return timed;
    }
    synthesis.wall_seconds = seconds_since(start);
    // Without streaming the one callback comes after the whole decoding.
    synthesis.first_audio_seconds = streams && first_audio_seconds ? *first_audio_seconds : synthesis.wall_seconds;
    synthesis.tokens = engine.stats().tokens_generated();
    synthesis.loop_seconds = engine.stats().loop_seconds;
    synthesis.audio_seconds = sample_rate > 0 ? static_cast<double>(timed.samples.size()) / sample_rate : 0.0;
    timed.stats = engine.stats();
    return timed;
}

// Of a sentence's timed repeats, the one whose wall time is the median (the
// lower of the two middle ones), appended to `result` and `audio`. A seed
// makes a synthesis repeat bit for bit, so repeats that differ in their
// audio or tokens are a bug: the sentence fails with an internal error.
void keep_median_repeat(std::vector<TimedSentence>& repeats, const SpeechSentence& sentence,
                        SpeechPipelineResult& result, PipelineAudio& audio) {
    const auto failed_repeat = std::find_if(repeats.begin(), repeats.end(),
                                            [](const TimedSentence& t) { return t.synthesis.failure.has_value(); });
    if (failed_repeat != repeats.end()) {  // a failure in any repeat is the sentence's
        TimedSentence failed = std::move(*failed_repeat);
        repeats.assign(1, std::move(failed));
    }
    for (size_t r = 1; r < repeats.size(); ++r) {
        const TimedSentence &first = repeats.front(), &other = repeats[r];
        if (first.samples != other.samples || first.synthesis.tokens != other.synthesis.tokens) {
            TimedSentence failed;
            failed.synthesis.failure = SentenceFailure{
                "its timing repeats differ (" + std::to_string(first.synthesis.tokens) + " and " +
                    std::to_string(other.synthesis.tokens) + " tokens, " + std::to_string(first.samples.size()) +
                    " and " + std::to_string(other.samples.size()) +
                    " samples): one seed must repeat a synthesis bit for bit",
                true};
            report_failure(result.run.file, sentence, *failed.synthesis.failure);
            repeats.assign(1, std::move(failed));
            break;
        }
    }
    std::vector<size_t> order(repeats.size());
    for (size_t r = 0; r < order.size(); ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return repeats[a].synthesis.wall_seconds < repeats[b].synthesis.wall_seconds;
    });
    TimedSentence& kept = repeats[order[(order.size() - 1) / 2]];
    if (!kept.synthesis.failure) result.run.stats.add(kept.stats);
    result.sentences.push_back(kept.synthesis);
    audio.sentences.push_back(std::move(kept.samples));
}

// Each original recording encoded and decoded by the pipeline's codec; none
// when the codec cannot encode.
PipelineAudio resynthesize_originals(Engine& engine, const SpeechSentenceSet& set) {
    PipelineAudio audio;
    if (!engine.codec_info().can_encode) return audio;
    audio.sample_rate = static_cast<int>(engine.sample_rate());
    for (size_t i = 0; i < set.sentences.size(); ++i) {
        const SpeechSentence& sentence = set.sentences[i];
        std::cerr << "\rcodec resynthesis of the recordings: " << i + 1 << "/" << set.sentences.size() << std::flush;
        const audio::Waveform wave = audio::read_waveform(sentence.audio_path);
        audio.sentences.push_back(engine.decode_audio(engine.encode_audio(wave.samples, wave.sample_rate)));
    }
    std::cerr << "\r" << std::string(72, ' ') << "\r" << std::flush;
    return audio;
}

// The original recordings and their resynthesis first, then each pipeline's
// speech, in one run so that the recognizers load once per thread. A
// sentence that failed has no speech: it is scored as all words deleted.
void recognize(SpeechBenchResult& result, PipelineAudio& resynthesis, std::vector<PipelineAudio>& audio,
               const SpeechBenchOptions& options) {
    const auto& sentences = result.sentences.sentences;
    std::vector<recognition::ScoringItem> items;
    for (const auto& s : sentences) items.push_back(recognition::ScoringItem::from_file(s.id, s.audio_path, s.text));
    const bool resynthesized = !resynthesis.sentences.empty();
    for (size_t i = 0; resynthesized && i < sentences.size(); ++i)
        items.push_back(recognition::ScoringItem::from_samples(
            sentences[i].id, std::move(resynthesis.sentences[i]), resynthesis.sample_rate, sentences[i].text));
    resynthesis.sentences.clear();
    // Where each pipeline's synthesis is among the items; none when it failed.
    std::vector<std::vector<std::optional<size_t>>> item_of(result.pipelines.size());
    for (size_t p = 0; p < result.pipelines.size(); ++p)
        for (size_t j = 0; j < result.pipelines[p].sentences.size(); ++j) {
            if (result.pipelines[p].sentences[j].failure) {
                item_of[p].emplace_back();
                continue;
            }
            const SpeechSentence& sentence = sentences[j % sentences.size()];
            item_of[p].emplace_back(items.size());
            items.push_back(recognition::ScoringItem::from_samples(sentence.id, std::move(audio[p].sentences[j]),
                                                                   audio[p].sample_rate, sentence.text));
        }
    audio.clear();

    recognition::TranscriptionOptions run = options.recognition;
    run.progress = recognition_progress_printer("recognizing");
    recognition::ErrorReport report;
    try {
        report = recognition::transcribe_and_score(items, run);
    } catch (const std::runtime_error& error) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, error.what());
    }
    result.recognition_jobs = report.jobs;
    result.recognition_wall_seconds = report.wall_seconds;
    auto take = [&](size_t block, std::vector<recognition::UtteranceResult>& out, recognition::ErrorTotals& totals) {
        for (size_t i = 0; i < sentences.size(); ++i) {
            out.push_back(std::move(report.utterances[block * sentences.size() + i]));
            totals.add(out.back());
        }
    };
    take(0, result.original, result.original_errors);
    if (resynthesized) take(1, result.resynthesis, result.resynthesis_errors);
    for (size_t p = 0; p < result.pipelines.size(); ++p) {
        auto& pipeline = result.pipelines[p];
        for (size_t j = 0; j < pipeline.sentences.size(); ++j) {
            const auto& item = item_of[p][j];
            const SpeechSentence& sentence = sentences[j % sentences.size()];
            pipeline.recognized.push_back(item ? std::move(report.utterances[*item])
                                               : failed_sentence_result(sentence.id, sentence.text));
            pipeline.errors.add(pipeline.recognized.back());
        }
    }
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path);
    if (!out) throw Error(CDZ_STATUS_IO_ERROR, path + ": cannot write");
    out << text;
    if (!out.flush()) throw Error(CDZ_STATUS_IO_ERROR, path + ": writing failed");
    std::cerr << "wrote " << path << '\n';
}

}  // namespace

int run_speech_bench(const SpeechBenchOptions& options) {
    SpeechBenchResult result;
    result.source = options.sentences;
    result.seed = options.seed;
    result.recognizer = options.recognition.recognizer;
    result.sentences = read_speech_sentences(options.sentences);
    check_before_running(options);
    // Every pipeline file is read and checked before the first one runs.
    std::vector<PipelineConfig> configs;
    for (const auto& file : options.pipelines) configs.push_back(load_pipeline_config_file(file));

    const size_t count = result.sentences.sentences.size(), pipelines = options.pipelines.size();
    if (options.seeds < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--seeds must be at least 1");
    result.seeds = options.seeds;
    // Synthesis j: sentence j % count with seed + j (time_sentence).
    const size_t syntheses = count * options.seeds;
    const size_t rounds =
        std::max<size_t>(1, std::min(syntheses, options.rounds > 0 ? options.rounds : (syntheses + 9) / 10));
    result.rounds = rounds;
    std::vector<PipelineAudio> audio(pipelines);
    result.pipelines.resize(pipelines);
    std::vector<std::vector<Engine::CostProfile>> costs(pipelines);
    const size_t repeats = std::max<size_t>(1, options.timing_repeats);
    result.timing_repeats = repeats;
    result.audio_after_loop = options.audio_after_loop;
    for (size_t round = 0; round < rounds; ++round) {
        const size_t begin = syntheses * round / rounds, end = syntheses * (round + 1) / rounds;
        // [pipeline][sentence - begin][repeat]
        std::vector<std::vector<std::vector<TimedSentence>>> timed(
            pipelines, std::vector<std::vector<TimedSentence>>(end - begin));
        for (size_t repeat = 0; repeat < repeats; ++repeat)
            for (size_t p = 0; p < pipelines; ++p) {
                const std::string& file = options.pipelines[p];
                Engine engine(configs[p]);
                if (round == 0 && repeat == 0 && p == 0) {
                    if (!engine.has_codec())
                        throw Error(CDZ_STATUS_INVALID_CONFIG, file + ": the speech suite needs pipelines with a [codec]");
                    // The prompts file counts frames of the codec it was made with:
                    // the first pipeline's, normally the same for all.
                    cut_voice_prompts(result.sentences, static_cast<int>(engine.codec_info().sample_rate),
                                      engine.codec_info().frame_rate);
                }
                SpeechPipelineResult& pipeline = result.pipelines[p];
                pipeline.run.file = file;
                pipeline.run.name = engine.config().name;
                pipeline.run.has_drafter = engine.has_drafter();
                pipeline.run.verifies = engine.verifies_drafts();
                audio[p].sample_rate = static_cast<int>(engine.sample_rate());
                const std::string position =
                    "[round " + std::to_string(round + 1) + "/" + std::to_string(rounds) +
                    (repeats > 1 ? ", repeat " + std::to_string(repeat + 1) + "/" + std::to_string(repeats) : "") +
                    ", " + std::to_string(p + 1) + "/" + std::to_string(pipelines) + "] ";
                for (size_t i = begin; i < end; ++i) {
                    std::cerr << "\r" << position << pipeline.run.name << ": sentence " << i % count + 1 << "/"
                              << count;
                    if (options.seeds > 1) std::cerr << ", seed " << i / count + 1 << "/" << options.seeds;
                    std::cerr << std::flush;
                    timed[p][i - begin].push_back(
                        time_sentence(engine, file, result.sentences, i, options, audio[p].sample_rate));
                }
                if (repeat + 1 == repeats) {
                    std::cerr << "\r" << position << pipeline.run.name << ": measuring costs   " << std::flush;
                    costs[p].push_back(measure_bench_costs(engine, options.repeats));
                }
                std::cerr << "\r" << std::string(96, ' ') << "\r" << std::flush;
            }
        for (size_t p = 0; p < pipelines; ++p)
            for (size_t i = begin; i < end; ++i)
                keep_median_repeat(timed[p][i - begin], result.sentences.sentences[i % count], result.pipelines[p],
                                   audio[p]);
    }
    for (size_t p = 0; p < pipelines; ++p) result.pipelines[p].run.costs = median_costs(costs[p]);
    PipelineAudio resynthesis;
    {
        Engine first(configs[0]);
        resynthesis = resynthesize_originals(first, result.sentences);
    }
    for (auto& sentence : result.sentences.sentences) std::vector<float>().swap(sentence.voice_prompt);
    for (auto& pipeline : result.pipelines)
        pipeline.figures = compute_figures(pipeline.run, result.pipelines.front().run);

    recognize(result, resynthesis, audio, options);
    estimate_intervals(result);

    print_speech_bench(std::cout, result);
    if (!options.json_file.empty()) write_file(options.json_file, speech_bench_json(result).dump(2) + "\n");
    if (!options.csv_file.empty()) write_file(options.csv_file, speech_bench_csv(result));
    if (!options.plot_file.empty()) {
        std::vector<SpeedupWerPoint> points;
        for (const auto& p : result.pipelines)
            points.push_back({p.run.name, p.figures.speedup, 100.0 * p.errors.words.rate()});
        plot_speedup_against_wer(options.plot_file, points, 100.0 * result.original_errors.words.rate(),
                                 "cadenza bench --suite speech: " + std::to_string(result.sentences.sentences.size()) +
                                     " sentences of split " + result.source.split +
                                     (result.seeds > 1 ? ", " + std::to_string(result.seeds) + " seeds each" : ""),
                                 result.pipelines.front().run.name);
        std::cerr << "wrote " << options.plot_file << '\n';
    }
    size_t internal_errors = 0;
    for (const auto& p : result.pipelines) internal_errors += p.internal_errors();
    if (internal_errors > 0) {
        std::cerr << "cadenza: error: " << internal_errors
                  << " sentence(s) failed with an internal error (a bug; please report it): see \"failed sentences\" "
                     "above; every other result is reported\n";
        return exit_internal_error;
    }
    return exit_ok;
}

}  // namespace cadenza::cli
