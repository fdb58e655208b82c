// `cadenza bench --suite speech`: every pipeline on the same test sentences
// with their voice prompts and seeds, timed one after the other in one
// process; then pocketsphinx judges the speech of each, and the original
// recordings as the reference (docs/benchmark.md, "The speech suite").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "speech_sentences.h"
#include "transcription_run.h"

namespace cadenza::cli {

struct SpeechBenchOptions {
    std::vector<std::string> pipelines;  // the first is the baseline
    SpeechSentenceSource sentences;
    uint64_t seed = 1;  // sentence i uses seed + i
    int repeats = 20;   // of each cost measurement
    recognition::TranscriptionOptions recognition;
    std::string json_file, csv_file, plot_file;  // empty: not written
};

// Prints the table and writes the files asked for; returns the exit code:
// exit_internal_error when a sentence failed with an internal error (a bug),
// after everything else is reported. A sentence that fails is recorded and
// the run goes on. Throws cadenza::Error on bad input, before any pipeline
// runs when it can.
int run_speech_bench(const SpeechBenchOptions& options);

}  // namespace cadenza::cli
