#include "transcription_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <time.h>

#include "wav_file.h"

namespace cadenza::recognition {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the calling thread: what decoding costs, whatever else competes
// for the cores.
double thread_cpu_seconds() {
    timespec time{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
    return static_cast<double>(time.tv_sec) + 1e-9 * static_cast<double>(time.tv_nsec);
}

int effective_jobs(int requested, size_t items) {
    const int wanted = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(wanted), items)));
}

// "utterance 'ID': PATH: reason", without repeating what the reason says.
std::string describe_failure(const ScoringItem& item, const std::string& reason) {
    std::string message;
    if (item.id != item.path) message = "utterance '" + item.id + "': ";
    if (!item.path.empty() && reason.rfind(item.path, 0) != 0) message += item.path + ": ";
    return message + reason;
}

UtteranceResult transcribe_one(PocketsphinxRecognizer& recognizer, const ScoringItem& item) {
    UtteranceResult result;
    result.id = item.id;
    result.group = item.group;
    result.reference = item.reference;
    const std::vector<float>* samples = &item.samples;
    int sample_rate = item.sample_rate;
    audio::Waveform waveform;
    if (!item.path.empty()) {
        waveform = audio::read_waveform(item.path);
        samples = &waveform.samples;
        sample_rate = waveform.sample_rate;
    } else if (sample_rate <= 0) {
        throw std::runtime_error("no audio file and no sample rate for the samples in memory");
    }

    const double start = thread_cpu_seconds();
    result.hypothesis = recognizer.transcribe(*samples, sample_rate);
    result.recognition_seconds = thread_cpu_seconds() - start;
    result.audio_seconds = static_cast<double>(samples->size()) / sample_rate;
    result.words = word_errors(item.reference, result.hypothesis);
    result.characters = character_errors(item.reference, result.hypothesis);
    return result;
}

}  // namespace

ScoringItem ScoringItem::from_file(std::string id, std::string path, std::string reference, std::string group) {
    ScoringItem item;
    item.id = std::move(id);
    item.path = std::move(path);
    item.reference = std::move(reference);
    item.group = std::move(group);
    return item;
}

ScoringItem ScoringItem::from_samples(std::string id, std::vector<float> samples, int sample_rate,
                                      std::string reference, std::string group) {
    ScoringItem item;
    item.id = std::move(id);
    item.samples = std::move(samples);
    item.sample_rate = sample_rate;
    item.reference = std::move(reference);
    item.group = std::move(group);
    return item;
}

void ErrorTotals::add(const UtteranceResult& result) {
    ++utterances;
    words += result.words;
    characters += result.characters;
    audio_seconds += result.audio_seconds;
    recognition_seconds += result.recognition_seconds;
}

std::vector<UtteranceResult> transcribe_all(const std::vector<ScoringItem>& items, const TranscriptionOptions& options) {
    std::vector<UtteranceResult> results(items.size());
    if (items.empty()) return results;
    const int jobs = effective_jobs(options.jobs, items.size());
    const auto start = Clock::now();

    // Items are claimed in input order, so when the run stops at a failure,
    // every earlier item has been claimed and finishes: the error reported is
    // the first in input order whatever the scheduling.
    std::atomic<size_t> next{0};
    std::atomic<bool> stop{false};
    std::mutex mutex;  // guards what follows, and serializes the progress callback
    size_t done = 0;
    double audio_done = 0.0;
    std::exception_ptr setup_error;
    std::exception_ptr first_error;
    size_t first_error_index = std::numeric_limits<size_t>::max();

    auto work = [&] {
        std::unique_ptr<PocketsphinxRecognizer> recognizer;
        try {
            recognizer = std::make_unique<PocketsphinxRecognizer>(options.recognizer);
        } catch (...) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!setup_error) setup_error = std::current_exception();
            stop = true;
            return;
        }
        while (!stop) {
            const size_t index = next++;
            if (index >= items.size()) return;
            const ScoringItem& item = items[index];
            try {
                results[index] = transcribe_one(*recognizer, item);
                std::lock_guard<std::mutex> lock(mutex);
                ++done;
                audio_done += results[index].audio_seconds;
                if (options.progress) {
                    TranscriptionProgress progress;
                    progress.done = done;
                    progress.total = items.size();
                    progress.audio_seconds_done = audio_done;
                    progress.elapsed_seconds = seconds_since(start);
                    progress.remaining_seconds =
                        progress.elapsed_seconds / static_cast<double>(done) * static_cast<double>(items.size() - done);
                    options.progress(progress);
                }
            } catch (const std::exception& error) {
                std::lock_guard<std::mutex> lock(mutex);
                if (index < first_error_index) {
                    first_error_index = index;
                    first_error = std::make_exception_ptr(std::runtime_error(describe_failure(item, error.what())));
                }
                stop = true;
            }
        }
    };

    std::vector<std::thread> workers;
    for (int k = 1; k < jobs; ++k) workers.emplace_back(work);
    work();
    for (auto& worker : workers) worker.join();
    if (setup_error) std::rethrow_exception(setup_error);
    if (first_error) std::rethrow_exception(first_error);
    return results;
}

ErrorReport summarize(std::vector<UtteranceResult> results) {
    ErrorReport report;
    for (const auto& result : results) {
        report.total.add(result);
        if (!result.group.empty()) report.by_group[result.group].add(result);
    }
    report.utterances = std::move(results);
    return report;
}

ErrorReport transcribe_and_score(const std::vector<ScoringItem>& items, const TranscriptionOptions& options) {
    const auto start = Clock::now();
    ErrorReport report = summarize(transcribe_all(items, options));
    report.jobs = effective_jobs(options.jobs, items.size());
    report.wall_seconds = seconds_since(start);
    return report;
}

}  // namespace cadenza::recognition
