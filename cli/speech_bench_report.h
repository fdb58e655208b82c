// What `cadenza bench --suite speech` measured, and the table, JSON and CSV it
// is reported as: the bench's figures per pipeline plus pocketsphinx's WER and
// CER of the synthesized speech (next to those of the original recordings),
// and the time to the first audio.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "speech_sentences.h"
#include "transcription_run.h"

namespace cadenza::cli {

// One sentence through one pipeline.
struct SentenceTiming {
    int64_t tokens = 0;
    double audio_seconds = 0;
    double wall_seconds = 0;
    double first_audio_seconds = 0;  // the whole wall time when the codec cannot stream
};

struct SpeechPipelineResult {
    PipelineRun run;
    PipelineFigures figures;
    std::vector<SentenceTiming> sentences;                // in sentence order
    std::vector<recognition::UtteranceResult> recognized;  // in sentence order
    recognition::ErrorTotals errors;
};

struct SpeechBenchResult {
    SpeechSentenceSource source;
    uint64_t seed = 1;
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
};

double mean_first_audio_seconds(const SpeechPipelineResult& result);
double median_first_audio_seconds(const SpeechPipelineResult& result);

void print_speech_bench(std::ostream& out, const SpeechBenchResult& result);
nlohmann::json speech_bench_json(const SpeechBenchResult& result);
std::string speech_bench_csv(const SpeechBenchResult& result);

}  // namespace cadenza::cli
