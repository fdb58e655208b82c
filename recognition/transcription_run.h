#pragma once
// Transcribes many utterances with pocketsphinx on N worker threads (one
// recognizer each) and scores them against their reference texts. Results come
// in input order and do not depend on scheduling.
//
//     std::vector<ScoringItem> items;
//     items.push_back(ScoringItem::from_samples("utt1", samples, 24000, "the reference text"));
//     ErrorReport report = transcribe_and_score(items, TranscriptionOptions{});
//     report.total.words.rate();  // the word error rate
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "error_rate.h"
#include "pocketsphinx_recognizer.h"

namespace cadenza::recognition {

// One utterance: audio from a file (when `path` is set) or from memory.
struct ScoringItem {
    std::string id;
    std::string path;            // read with libsndfile when not empty
    std::vector<float> samples;  // mono, used when `path` is empty
    int sample_rate = 0;         // of `samples`
    std::string reference;       // the text that was spoken; empty for transcription only
    std::string group;           // optional, e.g. the voice: totals are also kept per group

    static ScoringItem from_file(std::string id, std::string path, std::string reference, std::string group = {});
    static ScoringItem from_samples(std::string id, std::vector<float> samples, int sample_rate, std::string reference,
                                    std::string group = {});
};

struct TranscriptionProgress {
    size_t done = 0;
    size_t total = 0;
    double audio_seconds_done = 0.0;
    double elapsed_seconds = 0.0;
    double remaining_seconds = 0.0;  // estimated from the pace so far
};

struct TranscriptionOptions {
    RecognizerSettings recognizer;
    int jobs = 1;  // worker threads, each with its own recognizer; 0 = one per core
    // Called after each utterance, from a worker thread, never concurrently.
    std::function<void(const TranscriptionProgress&)> progress;
};

struct UtteranceResult {
    std::string id;
    std::string group;
    std::string reference;   // as given
    std::string hypothesis;  // as recognized
    EditCounts words;
    EditCounts characters;
    double audio_seconds = 0.0;
    double recognition_seconds = 0.0;  // CPU seconds of decoding (resampling included) on its thread
};

// Sums over utterances: rates are total errors over total reference length,
// not the mean of per-utterance rates.
struct ErrorTotals {
    size_t utterances = 0;
    EditCounts words;
    EditCounts characters;
    double audio_seconds = 0.0;
    double recognition_seconds = 0.0;

    void add(const UtteranceResult& result);
    // CPU seconds of decoding per second of audio: the speed of one thread
    // with a core to itself.
    double real_time_factor() const { return audio_seconds > 0.0 ? recognition_seconds / audio_seconds : 0.0; }
};

struct ErrorReport {
    std::vector<UtteranceResult> utterances;  // in input order
    ErrorTotals total;
    std::map<std::string, ErrorTotals> by_group;  // for items with a group
    int jobs = 1;                                 // worker threads used
    double wall_seconds = 0.0;                    // the whole run, recognizers' loading included
};

// Transcribes every item. Throws std::runtime_error naming the file or item
// that failed (the first one in input order) after stopping the workers.
std::vector<UtteranceResult> transcribe_all(const std::vector<ScoringItem>& items, const TranscriptionOptions& options);

// Adds up the results: totals and per-group totals.
ErrorReport summarize(std::vector<UtteranceResult> results);

// transcribe_all, then summarize, with the run's wall time and jobs.
ErrorReport transcribe_and_score(const std::vector<ScoringItem>& items, const TranscriptionOptions& options);

}  // namespace cadenza::recognition
