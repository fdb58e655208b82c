// `cadenza bench --suite speech`: every pipeline on the same test sentences
// with their voice prompts and seeds, timed in rounds (every pipeline on a
// block of sentences, then the next block) in one process; then
// pocketsphinx judges the speech of each, and the original recordings as
// the reference (docs/benchmark.md, "The speech suite").
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
    int repeats = 20;   // of each cost measurement, in each round
    // The sentences are timed in this many rounds of consecutive sentences;
    // each round runs every pipeline on its sentences in turn, so that a
    // machine whose speed drifts slows every pipeline alike. 0: one round per
    // 10 sentences.
    size_t rounds = 0;
    // Each round's blocks are timed this many times in turn (every pipeline
    // once, then again); each sentence keeps the repeat whose wall time is
    // the median of its repeats, and its repeats must be the same audio.
    size_t timing_repeats = 1;
    // Each sentence is synthesized with this many seeds in every pipeline:
    // of N sentences, sentence i's k-th synthesis uses seed + i + k * N, so
    // the first N are those of a run with one seed. Sampled speech varies
    // from seed to seed as much as between two pipelines; more seeds narrow
    // the intervals of a paired WER difference.
    size_t seeds = 1;
    // Each sentence's audio decoded after its decoding loop instead of in
    // chunks beside it: the loop then runs alone, as the ceiling's cost model
    // measured it, and its distance from the ceiling is the runtime's own
    // overhead; streamed, it also pays for the codec's work on the other core.
    bool audio_after_loop = false;
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
