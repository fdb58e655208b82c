// What `cadenza bench --suite speech` measured, and the table, JSON and CSV it
// is reported as: the bench's figures per pipeline plus pocketsphinx's WER and
// CER of the synthesized speech (next to those of the original recordings),
// and the time to the first audio, with 95% bootstrap intervals of the WER
// and of its paired difference to the first pipeline. A sentence whose
// synthesis failed is kept, with its error, and counts as all its reference
// words (and characters) deleted.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "speech_sentences.h"
#include "transcription_run.h"
#include "sentence_bootstrap.h"

namespace cadenza::cli {

// Why a sentence has no audio: its synthesis threw.
struct SentenceFailure {
    std::string message;
    bool internal = false;  // a bug (exit_codes.h), not a limit of the pipeline such as its positions
};

// One sentence through one pipeline: its timings, or why it failed (then
// the timings are 0 and the sentence is left out of the speed figures).
struct SentenceSynthesis {
    int64_t tokens = 0;
    double audio_seconds = 0;
    double wall_seconds = 0;
    double loop_seconds = 0;  // its decoding loop's, what the speed figures count
    double first_audio_seconds = 0;  // the whole wall time when the codec cannot stream
    std::optional<SentenceFailure> failure;
};

struct SpeechPipelineResult {
    PipelineRun run;  // its statistics summed over the sentences that did not fail
    PipelineFigures figures;
    // Synthesis j is sentence j % N's with seed + j, N sentences
    // (SpeechBenchResult::seeds of them each): sentence order, seed by seed.
    std::vector<SentenceSynthesis> sentences;
    std::vector<recognition::UtteranceResult> recognized;  // in the same order; a failed one: all words deleted
    recognition::ErrorTotals errors;
    evaluation::Interval wer_percent_ci95;
    evaluation::Interval wer_difference_ci95;  // points, paired, against the first pipeline; [0, 0] for the first
    evaluation::Interval speedup_ci95;         // over the first pipeline, paired; [1, 1] for the first

    size_t failed_sentences() const;
    size_t internal_errors() const;
};

struct SpeechBenchResult {
    SpeechSentenceSource source;
    uint64_t seed = 1;
    size_t seeds = 1;             // syntheses of each sentence in each pipeline (SpeechBenchOptions::seeds)
    size_t rounds = 1;            // of the timing (SpeechBenchOptions::rounds)
    size_t timing_repeats = 1;    // SpeechBenchOptions::timing_repeats
    bool audio_after_loop = false;  // SpeechBenchOptions::audio_after_loop
    SpeechSentenceSet sentences;  // their voice prompts already released
    recognition::RecognizerSettings recognizer;
    int recognition_jobs = 1;
    double recognition_wall_seconds = 0;
    std::vector<recognition::UtteranceResult> original;  // the recordings, in sentence order
    recognition::ErrorTotals original_errors;
    // The recordings through the first pipeline's codec (encode, decode): what
    // a target can at best say through that codec, the target gate's reference.
    // Empty when that codec cannot encode.
    std::vector<recognition::UtteranceResult> resynthesis;
    recognition::ErrorTotals resynthesis_errors;
    std::vector<SpeechPipelineResult> pipelines;  // the first is the baseline
    int bootstrap_resamples = evaluation::SentenceBootstrap::default_resamples;
    uint64_t bootstrap_seed = evaluation::SentenceBootstrap::default_seed;
};

// What a sentence that failed counts as: its reference against an empty
// hypothesis, every word and character deleted.
recognition::UtteranceResult failed_sentence_result(const std::string& id, const std::string& reference);

// Each sentence's word counts summed over its seeds: what the bootstrap
// resamples, so that a sentence's seeds go in or out of a resample together.
std::vector<recognition::EditCounts> sentence_word_counts(const SpeechPipelineResult& pipeline, size_t sentence_count);

// Each sentence's tokens and decoding-loop seconds summed over its seeds (a
// failed synthesis adds nothing, as it adds nothing to the speed figures).
std::vector<evaluation::TimedTokens> sentence_timed_tokens(const SpeechPipelineResult& pipeline, size_t sentence_count);

// Fills each pipeline's wer_percent_ci95 and wer_difference_ci95 from its
// recognized sentences, and its speedup_ci95 from its sentences' timings
// (the spread of the speedup between this run's sentences, not the drift
// of the machine between runs), on the same resamples of the result's
// bootstrap settings.
void estimate_intervals(SpeechBenchResult& result);

// Over the sentences that did not fail.
double mean_first_audio_seconds(const SpeechPipelineResult& result);
double median_first_audio_seconds(const SpeechPipelineResult& result);

void print_speech_bench(std::ostream& out, const SpeechBenchResult& result);
nlohmann::json speech_bench_json(const SpeechBenchResult& result);
std::string speech_bench_csv(const SpeechBenchResult& result);

}  // namespace cadenza::cli
