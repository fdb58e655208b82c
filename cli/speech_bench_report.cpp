#include "speech_bench_report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "edit_counts_json.h"

namespace cadenza::cli {
namespace {

using recognition::EditCounts;
using recognition::ErrorTotals;

std::string fixed(double value, int digits) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(digits) << value;
    return out.str();
}

std::string number(double value) {
    std::ostringstream out;
    out << std::setprecision(6) << value;
    return out.str();
}

std::string signed_fixed(double value, int digits) { return (value >= 0 ? "+" : "") + fixed(value, digits); }

double percent(const EditCounts& counts) { return 100.0 * counts.rate(); }

std::vector<PipelineRun> runs_of(const SpeechBenchResult& result) {
    std::vector<PipelineRun> runs;
    for (const auto& p : result.pipelines) runs.push_back(p.run);
    return runs;
}

std::vector<PipelineFigures> figures_of(const SpeechBenchResult& result) {
    std::vector<PipelineFigures> figures;
    for (const auto& p : result.pipelines) figures.push_back(p.figures);
    return figures;
}


nlohmann::json errors_json(const ErrorTotals& totals, const ErrorTotals& original) {
    return {{"wer_percent", percent(totals.words)},
            {"cer_percent", percent(totals.characters)},
            {"wer_delta_points", percent(totals.words) - percent(original.words)},
            {"cer_delta_points", percent(totals.characters) - percent(original.characters)},
            {"words", edit_counts_json(totals.words)},
            {"characters", edit_counts_json(totals.characters)},
            {"recognized_audio_seconds", totals.audio_seconds},
            {"recognition_cpu_seconds", totals.recognition_seconds}};
}

std::string interval_text(const evaluation::Interval& interval, bool with_sign) {
    auto format = [&](double value) { return with_sign ? signed_fixed(value, 1) : fixed(value, 1); };
    return "[" + format(interval.low) + ", " + format(interval.high) + "]";
}

// Pipelines after the first have a difference to it.
double wer_difference_points(const SpeechBenchResult& result, const SpeechPipelineResult& pipeline) {
    return percent(pipeline.errors.words) - percent(result.pipelines.front().errors.words);
}

void print_wer_intervals(std::ostream& out, const SpeechBenchResult& result) {
    const auto& first = result.pipelines.front();
    out << "\nWER with 95% bootstrap intervals (" << result.bootstrap_resamples << " resamples of the "
        << result.sentences.sentences.size() << " sentences with replacement";
    if (result.seeds > 1) out << ", each with its " << result.seeds << " seeds";
    out << ", seed " << result.bootstrap_seed
        << "; differences paired: both pipelines on the same resampled sentences)\n";
    for (size_t p = 0; p < result.pipelines.size(); ++p) {
        const auto& pipeline = result.pipelines[p];
        out << "  " << std::left << std::setw(22) << pipeline.run.name.substr(0, 21) << std::right << "WER "
            << std::setw(5) << fixed(percent(pipeline.errors.words), 1) << " % "
            << interval_text(pipeline.wer_percent_ci95, false);
        if (p > 0)
            out << "   dWER vs " << first.run.name << " " << signed_fixed(wer_difference_points(result, pipeline), 1)
                << " pt " << interval_text(pipeline.wer_difference_ci95, true);
        out << '\n';
    }
}

void print_speedup_intervals(std::ostream& out, const SpeechBenchResult& result) {
    const auto& first = result.pipelines.front();
    out << "\nspeedup over " << first.run.name << " with 95% bootstrap intervals (the same resamples; each "
        << "resample's tokens over its decoding loops' seconds, against " << first.run.name
        << "'s on the same sentences: the spread between this run's sentences, not the machine's drift between "
           "runs)\n";
    for (size_t p = 1; p < result.pipelines.size(); ++p) {
        const auto& pipeline = result.pipelines[p];
        out << "  " << std::left << std::setw(22) << pipeline.run.name.substr(0, 21) << std::right << std::setw(6)
            << fixed(pipeline.figures.speedup, 2) << "x [" << fixed(pipeline.speedup_ci95.low, 2) << ", "
            << fixed(pipeline.speedup_ci95.high, 2) << "]\n";
    }
}

// At most this many failures per pipeline in the table's text; the JSON has all.
constexpr size_t failures_listed = 5;

void print_failures(std::ostream& out, const SpeechBenchResult& result) {
    const auto& sentences = result.sentences.sentences;
    bool heading = false;
    for (const auto& pipeline : result.pipelines) {
        if (pipeline.failed_sentences() == 0) continue;
        if (!heading)
            out << "\nfailed sentences (no audio; each counts as all its reference words and characters deleted, and "
                   "is left out of the speed figures)\n";
        heading = true;
        out << "  " << pipeline.run.name << ": " << pipeline.failed_sentences() << " of " << pipeline.sentences.size();
        if (pipeline.internal_errors() > 0)
            out << ", " << pipeline.internal_errors() << " of them internal errors (a bug; please report it)";
        out << '\n';
        size_t listed = 0;
        for (size_t i = 0; i < pipeline.sentences.size(); ++i) {
            const auto& failure = pipeline.sentences[i].failure;
            if (!failure) continue;
            if (listed++ == failures_listed) {
                out << "    ... and " << pipeline.failed_sentences() - failures_listed << " more (the JSON lists all)\n";
                break;
            }
            const SpeechSentence& sentence = sentences[i % sentences.size()];
            out << "    '" << sentence.id << "' (" << sentence.where;
            if (result.seeds > 1) out << ", seed " << result.seed + i;
            out << "): " << (failure->internal ? "INTERNAL ERROR: " : "") << failure->message << '\n';
        }
    }
}

}  // namespace

size_t SpeechPipelineResult::failed_sentences() const {
    return static_cast<size_t>(
        std::count_if(sentences.begin(), sentences.end(), [](const SentenceSynthesis& s) { return s.failure; }));
}

size_t SpeechPipelineResult::internal_errors() const {
    return static_cast<size_t>(std::count_if(sentences.begin(), sentences.end(), [](const SentenceSynthesis& s) {
        return s.failure && s.failure->internal;
    }));
}

recognition::UtteranceResult failed_sentence_result(const std::string& id, const std::string& reference) {
    recognition::UtteranceResult result;
    result.id = id;
    result.reference = reference;
    result.words = recognition::word_errors(reference, "");
    result.characters = recognition::character_errors(reference, "");
    return result;
}

namespace {

// Synthesis j is sentence j % N's: refused unless each of the N sentences
// has as many syntheses as the others.
void check_whole_seeds(const char* caller, size_t syntheses, size_t sentence_count) {
    if (sentence_count == 0 ? syntheses > 0 : syntheses % sentence_count != 0)
        throw std::invalid_argument(std::string(caller) + ": " + std::to_string(syntheses) +
                                    " syntheses are not a whole number of seeds of " + std::to_string(sentence_count) +
                                    " sentences");
}

}  // namespace

std::vector<EditCounts> sentence_word_counts(const SpeechPipelineResult& pipeline, size_t sentence_count) {
    const size_t syntheses = pipeline.recognized.size();
    check_whole_seeds("sentence_word_counts", syntheses, sentence_count);
    std::vector<EditCounts> words(sentence_count);
    for (size_t j = 0; j < syntheses; ++j) words[j % sentence_count] += pipeline.recognized[j].words;
    return words;
}

std::vector<evaluation::TimedTokens> sentence_timed_tokens(const SpeechPipelineResult& pipeline,
                                                          size_t sentence_count) {
    const size_t syntheses = pipeline.sentences.size();
    check_whole_seeds("sentence_timed_tokens", syntheses, sentence_count);
    std::vector<evaluation::TimedTokens> timed(sentence_count);
    for (size_t j = 0; j < syntheses; ++j) {
        const SentenceSynthesis& synthesis = pipeline.sentences[j];
        if (synthesis.failure) continue;
        timed[j % sentence_count].tokens += static_cast<double>(synthesis.tokens);
        timed[j % sentence_count].seconds += synthesis.loop_seconds;
    }
    return timed;
}

void estimate_intervals(SpeechBenchResult& result) {
    if (result.pipelines.empty()) return;
    const size_t count = result.sentences.sentences.size();
    const evaluation::SentenceBootstrap bootstrap(count, result.bootstrap_resamples, result.bootstrap_seed);
    const auto first_words = sentence_word_counts(result.pipelines.front(), count);
    const auto first_timings = sentence_timed_tokens(result.pipelines.front(), count);
    for (auto& pipeline : result.pipelines) {
        const auto words = sentence_word_counts(pipeline, count);
        pipeline.wer_percent_ci95 = bootstrap.wer_percent(words);
        pipeline.wer_difference_ci95 = bootstrap.wer_difference_points(words, first_words);
        pipeline.speedup_ci95 = bootstrap.speedup(sentence_timed_tokens(pipeline, count), first_timings);
    }
}

double mean_first_audio_seconds(const SpeechPipelineResult& result) {
    double sum = 0;
    size_t count = 0;
    for (const auto& s : result.sentences)
        if (!s.failure) {
            sum += s.first_audio_seconds;
            ++count;
        }
    return count > 0 ? sum / count : 0.0;
}

double median_first_audio_seconds(const SpeechPipelineResult& result) {
    std::vector<double> seconds;
    for (const auto& s : result.sentences)
        if (!s.failure) seconds.push_back(s.first_audio_seconds);
    if (seconds.empty()) return 0;
    std::sort(seconds.begin(), seconds.end());
    const size_t middle = seconds.size() / 2;
    return seconds.size() % 2 ? seconds[middle] : (seconds[middle - 1] + seconds[middle]) / 2;
}

void print_speech_bench(std::ostream& out, const SpeechBenchResult& result) {
    const auto& set = result.sentences;
    const auto& original = result.original_errors;
    out << "cadenza bench --suite speech: " << result.pipelines.size() << " pipeline(s), " << set.sentences.size()
        << " sentence(s) of split " << result.source.split << " (" << fixed(original.audio_seconds, 1)
        << " s of original audio), each with its voice prompt and seed " << result.seed << " + i in every pipeline";
    if (result.seeds > 1)
        out << ", and again with seed " << result.seed << " + i + k x " << set.sentences.size() << " for k = 1.."
            << result.seeds - 1 << " (" << result.seeds << " syntheses of each sentence)";
    if (set.skipped_without_prompt > 0)
        out << "; " << set.skipped_without_prompt << " utterance(s) without a voice prompt skipped";
    out << "\nspeedup is over the first pipeline in this run; timed in " << result.rounds
        << " round(s), each running every pipeline on its block of sentences in turn";
    if (result.timing_repeats > 1)
        out << ", " << result.timing_repeats << " times in turn (each sentence's figures: the repeat with the median "
            << "wall time; every repeat the same audio)";
    out << "\n"
        << (result.audio_after_loop
                ? "audio: decoded after each sentence's decoding loop (--audio-after-loop): the loop runs alone, as "
                  "the cost model measured it; the first audio comes at the end\n"
                : "audio: streamed, decoded in chunks beside the decoding loop where the codec can, as a streaming "
                  "application hears it (the codec's work on the other core is part of what the loop pays)\n");
    out << "original audio (the reference): WER " << fixed(percent(original.words), 1) << " % ("
        << original.words.errors() << " errors / " << original.words.reference_length << " words), CER "
        << fixed(percent(original.characters), 1) << " %\n";
    const auto& resynthesis = result.resynthesis_errors;
    const bool resynthesized = !result.resynthesis.empty();
    if (resynthesized)
        out << "the recordings through the first pipeline's codec: WER " << fixed(percent(resynthesis.words), 1)
            << " % (" << resynthesis.words.errors() << " errors), CER " << fixed(percent(resynthesis.characters), 1)
            << " %\n";
    out << "\n";

    ExtraColumn wer{"WER %", {}}, cer{"CER %", {}}, delta{"dWER pt", {}}, over_codec{"dWER codec pt", {}},
        ttfa{"TTFA ms", {}}, failed{"failed", {}};
    for (const auto& p : result.pipelines) {
        wer.cells.push_back(fixed(percent(p.errors.words), 1));
        cer.cells.push_back(fixed(percent(p.errors.characters), 1));
        delta.cells.push_back(signed_fixed(percent(p.errors.words) - percent(original.words), 1));
        over_codec.cells.push_back(
            resynthesized ? signed_fixed(percent(p.errors.words) - percent(resynthesis.words), 1) : "-");
        ttfa.cells.push_back(fixed(1e3 * mean_first_audio_seconds(p), 1));
        failed.cells.push_back(std::to_string(p.failed_sentences()));
    }
    print_bench_details(out, runs_of(result), figures_of(result), {wer, cer, delta, over_codec, ttfa, failed},
                        "RTF aud/s");
    out << "RTF aud/s = seconds of audio per second of wall time; TTFA ms = mean time from the request to the first "
           "audio (streamed when the codec can); dWER pt = WER - the original audio's, dWER codec pt = WER - the codec "
           "resynthesis', in points; failed = sentences whose synthesis failed, each counted as all its words "
           "deleted\n";
    out << "recognition: pocketsphinx, " << result.recognition_jobs << " job(s), "
        << fixed(result.recognition_wall_seconds, 1) << " s, after every pipeline was timed\n";
    print_wer_intervals(out, result);
    if (result.pipelines.size() > 1) print_speedup_intervals(out, result);
    print_failures(out, result);
}

nlohmann::json speech_bench_json(const SpeechBenchResult& result) {
    nlohmann::json json = bench_json(runs_of(result), figures_of(result), result.sentences.sentences.size());
    json.erase("texts");
    json["suite"] = "speech";
    json["manifest"] = result.source.manifest;
    json["prompts"] = result.source.prompts_file;
    json["split"] = result.source.split;
    json["limit"] = result.source.limit;
    json["seed"] = result.seed;
    json["seeds_per_sentence"] = result.seeds;
    json["rounds"] = result.rounds;
    json["timing_repeats"] = result.timing_repeats;
    json["audio"] = result.audio_after_loop ? "after_loop" : "streamed";
    json["sentence_count"] = result.sentences.sentences.size();
    json["skipped_without_prompt"] = result.sentences.skipped_without_prompt;
    json["original_audio_seconds"] = result.original_errors.audio_seconds;
    json["recognizer"] = {{"model", result.recognizer.model_directory},
                          {"dictionary", result.recognizer.dictionary},
                          {"language_model", result.recognizer.language_model},
                          {"decoder_settings", nlohmann::json::object()},
                          {"jobs", result.recognition_jobs},
                          {"wall_seconds", result.recognition_wall_seconds}};
    for (const auto& [name, value] : result.recognizer.decoder_settings)
        json["recognizer"]["decoder_settings"][name] = value;
    json["wer_bootstrap"] = {
        {"resamples", result.bootstrap_resamples},
        {"seed", result.bootstrap_seed},
        {"confidence", evaluation::SentenceBootstrap::default_confidence},
        {"method", "sentences resampled with replacement, each with all its seeds; WER of a resample = its word "
                   "errors summed / its reference words summed; percentile interval; differences to the first "
                   "pipeline paired on the same resamples"},
        {"speedup_method", "the same resamples; speedup of a resample = its tokens summed / its decoding loops' "
                           "seconds summed, over the first pipeline's on the same sentences; percentile interval"}};
    json["failed_sentence_scoring"] = "a sentence whose synthesis failed counts as all its reference words and "
                                      "characters deleted; it is left out of the speed figures";
    json["original_audio"] = errors_json(result.original_errors, result.original_errors);
    if (!result.resynthesis.empty())
        json["codec_resynthesis"] = errors_json(result.resynthesis_errors, result.original_errors);

    json["sentences"] = nlohmann::json::array();
    for (size_t i = 0; i < result.sentences.sentences.size(); ++i) {
        const auto& s = result.sentences.sentences[i];
        const auto& o = result.original.at(i);
        json["sentences"].push_back({{"id", s.id},
                                     {"voice", s.voice},
                                     {"seed", result.seed + i},
                                     {"prompt_id", s.prompt_id},
                                     {"prompt_begin_frame", s.prompt_begin_frame},
                                     {"prompt_frames", s.prompt_frames},
                                     {"reference", s.text},
                                     {"original_hypothesis", o.hypothesis},
                                     {"original_words", edit_counts_json(o.words)},
                                     {"original_audio_seconds", o.audio_seconds}});
        if (!result.resynthesis.empty()) {
            json["sentences"].back()["resynthesis_hypothesis"] = result.resynthesis.at(i).hypothesis;
            json["sentences"].back()["resynthesis_words"] = edit_counts_json(result.resynthesis.at(i).words);
        }
    }

    for (size_t p = 0; p < result.pipelines.size(); ++p) {
        const auto& pipeline = result.pipelines[p];
        auto& entry = json["pipelines"][p];
        entry.update(errors_json(pipeline.errors, result.original_errors));
        entry["wer_percent_ci95_low"] = pipeline.wer_percent_ci95.low;
        entry["wer_percent_ci95_high"] = pipeline.wer_percent_ci95.high;
        if (p > 0) {
            entry["wer_difference_vs_first_points"] = wer_difference_points(result, pipeline);
            entry["wer_difference_vs_first_points_ci95_low"] = pipeline.wer_difference_ci95.low;
            entry["wer_difference_vs_first_points_ci95_high"] = pipeline.wer_difference_ci95.high;
        }
        entry["speedup_ci95_low"] = pipeline.speedup_ci95.low;
        entry["speedup_ci95_high"] = pipeline.speedup_ci95.high;
        entry["failed_sentences"] = pipeline.failed_sentences();
        entry["internal_errors"] = pipeline.internal_errors();
        entry["ttfa_ms"] = {{"mean", 1e3 * mean_first_audio_seconds(pipeline)},
                            {"median", 1e3 * median_first_audio_seconds(pipeline)}};
        entry["sentences"] = nlohmann::json::array();
        for (size_t i = 0; i < pipeline.sentences.size(); ++i) {
            const auto& synthesis = pipeline.sentences[i];
            const auto& recognized = pipeline.recognized.at(i);
            nlohmann::json sentence{{"id", recognized.id},
                                    {"seed", result.seed + i},
                                    {"failed", synthesis.failure.has_value()},
                                    {"hypothesis", recognized.hypothesis},
                                    {"words", edit_counts_json(recognized.words)},
                                    {"characters", edit_counts_json(recognized.characters)}};
            if (synthesis.failure) {
                sentence["error"] = synthesis.failure->message;
                sentence["internal_error"] = synthesis.failure->internal;
            } else {
                sentence["tokens"] = synthesis.tokens;
                sentence["audio_seconds"] = synthesis.audio_seconds;
                sentence["wall_seconds"] = synthesis.wall_seconds;
                sentence["loop_seconds"] = synthesis.loop_seconds;
                sentence["ttfa_ms"] = 1e3 * synthesis.first_audio_seconds;
            }
            entry["sentences"].push_back(std::move(sentence));
        }
    }
    return json;
}

std::string speech_bench_csv(const SpeechBenchResult& result) {
    const auto& original = result.original_errors;
    std::vector<ExtraColumn> columns;
    for (const char* name : {"sentences", "failed_sentences", "internal_errors", "ttfa_ms", "ttfa_median_ms",
                             "wer_percent", "wer_percent_ci95_low", "wer_percent_ci95_high",
                             "wer_difference_vs_first_points", "wer_difference_vs_first_points_ci95_low",
                             "wer_difference_vs_first_points_ci95_high", "cer_percent", "wer_delta_points",
                             "cer_delta_points", "original_wer_percent", "original_cer_percent",
                             "resynthesis_wer_percent", "resynthesis_cer_percent", "word_errors", "reference_words",
                             "character_errors", "reference_characters", "speedup_ci95_low", "speedup_ci95_high"})
        columns.push_back({name, {}});
    for (size_t i = 0; i < result.pipelines.size(); ++i) {
        const auto& p = result.pipelines[i];
        const bool first = i == 0;  // no difference to itself
        const std::vector<std::string> cells{
            std::to_string(p.sentences.size()),
            std::to_string(p.failed_sentences()),
            std::to_string(p.internal_errors()),
            number(1e3 * mean_first_audio_seconds(p)),
            number(1e3 * median_first_audio_seconds(p)),
            number(percent(p.errors.words)),
            number(p.wer_percent_ci95.low),
            number(p.wer_percent_ci95.high),
            first ? "" : number(wer_difference_points(result, p)),
            first ? "" : number(p.wer_difference_ci95.low),
            first ? "" : number(p.wer_difference_ci95.high),
            number(percent(p.errors.characters)),
            number(percent(p.errors.words) - percent(original.words)),
            number(percent(p.errors.characters) - percent(original.characters)),
            number(percent(original.words)),
            number(percent(original.characters)),
            result.resynthesis.empty() ? "" : number(percent(result.resynthesis_errors.words)),
            result.resynthesis.empty() ? "" : number(percent(result.resynthesis_errors.characters)),
            std::to_string(p.errors.words.errors()),
            std::to_string(p.errors.words.reference_length),
            std::to_string(p.errors.characters.errors()),
            std::to_string(p.errors.characters.reference_length),
            number(p.speedup_ci95.low),
            number(p.speedup_ci95.high)};
        for (size_t c = 0; c < columns.size(); ++c) columns[c].cells.push_back(cells[c]);
    }
    return bench_csv(runs_of(result), figures_of(result), columns);
}

}  // namespace cadenza::cli
