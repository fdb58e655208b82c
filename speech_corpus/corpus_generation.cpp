#include "corpus_generation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>

#include "generation_progress.h"
#include "phone_alignment.h"
#include "utterance_audio.h"
#include "utterance_synthesis.h"

namespace cadenza::speech_corpus {
namespace {

namespace fs = std::filesystem;

constexpr size_t errors_kept = 20;

bool write_all(int fd, const std::string& text) {
    size_t written = 0;
    while (written < text.size()) {
        const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<size_t>(n);
    }
    return true;
}

std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\t' || c == '\r') c = ' ';
    return text;
}

std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
    return "ended";
}

// The worker's side of the pipes: reads batches (plan indices on one line),
// speaks them and answers one line per utterance: "index\tduration\terror".
[[noreturn]] void run_worker(const std::vector<PlannedUtterance>& plan, int commands, int results,
                             const std::string& work_directory) {
    // Synthesizers chatter on the standard streams ("udb failed to find
    // entry"); outcomes go through the pipe, so the chatter is dropped.
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    }
    UtteranceSynthesizer synthesizer(work_directory);
    std::string buffer;
    char chunk[4096];
    for (;;) {
        size_t newline;
        while ((newline = buffer.find('\n')) == std::string::npos) {
            const ssize_t n = ::read(commands, chunk, sizeof(chunk));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                std::error_code ignored;
                fs::remove_all(work_directory, ignored);
                _exit(0);
            }
            buffer.append(chunk, static_cast<size_t>(n));
        }
        std::istringstream line(buffer.substr(0, newline));
        buffer.erase(0, newline + 1);
        std::vector<size_t> indices;
        std::vector<const PlannedUtterance*> batch;
        for (size_t index; line >> index;) {
            if (index >= plan.size()) _exit(3);
            indices.push_back(index);
            batch.push_back(&plan[index]);
        }
        std::vector<bool> answered(batch.size(), false);
        const auto answer = [&](size_t i, const UtteranceOutcome& outcome) {
            char head[64];
            std::snprintf(head, sizeof(head), "%zu\t%.6f\t", indices[i], outcome.duration_seconds);
            if (!write_all(results, head + one_line(outcome.error) + "\n")) _exit(1);
            answered[i] = true;
        };
        try {
            synthesizer.synthesize(batch, answer);
        } catch (const std::exception& error) {
            for (size_t i = 0; i < batch.size(); ++i)
                if (!answered[i]) answer(i, {0.0, error.what()});
        }
    }
}

struct Worker {
    pid_t pid = -1;
    int commands = -1;  // the parent writes batches here
    int results = -1;   // and reads outcomes here
    std::vector<size_t> batch;
    std::vector<bool> answered;
    size_t answered_count = 0;
    std::string buffer;
};

class WorkerPool {
public:
    WorkerPool(const std::vector<PlannedUtterance>& plan, int size, std::string work_directory)
        : plan_(plan), workers_(static_cast<size_t>(size)), work_directory_(std::move(work_directory)) {}

    ~WorkerPool() {
        for (auto& worker : workers_) stop(worker);
    }

    std::vector<Worker>& workers() { return workers_; }

    void start(size_t slot) {
        Worker& worker = workers_[slot];
        int commands[2], results[2];
        if (pipe(commands) != 0) throw std::runtime_error("cannot create a pipe for a worker process");
        if (pipe(results) != 0) {
            close(commands[0]);
            close(commands[1]);
            throw std::runtime_error("cannot create a pipe for a worker process");
        }
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("cannot start a worker process");
        if (pid == 0) {
            for (const auto& other : workers_) {
                if (other.commands >= 0) close(other.commands);
                if (other.results >= 0) close(other.results);
            }
            close(commands[1]);
            close(results[0]);
            run_worker(plan_, commands[0], results[1],
                       (fs::path(work_directory_) / ("worker-" + std::to_string(getpid()))).string());
        }
        close(commands[0]);
        close(results[1]);
        worker = Worker{};
        worker.pid = pid;
        worker.commands = commands[1];
        worker.results = results[0];
    }

    // Closes the worker's pipes and waits for it; returns how it ended.
    std::string stop(Worker& worker) {
        if (worker.pid < 0) return "";
        if (worker.commands >= 0) close(worker.commands);
        if (worker.results >= 0) close(worker.results);
        int status = 0;
        waitpid(worker.pid, &status, 0);
        worker.pid = -1;
        worker.commands = worker.results = -1;
        return describe_wait_status(status);
    }

    void assign(Worker& worker, std::vector<size_t> batch) {
        std::string line;
        for (const size_t index : batch) line += std::to_string(index) + ' ';
        line.back() = '\n';
        worker.batch = std::move(batch);
        worker.answered.assign(worker.batch.size(), false);
        worker.answered_count = 0;
        // A failed write means the worker died: poll reports it, and the batch is handed on.
        write_all(worker.commands, line);
    }

private:
    const std::vector<PlannedUtterance>& plan_;
    std::vector<Worker> workers_;
    std::string work_directory_;
};

// Utterances of one voice together (a festival process speaks a whole batch),
// in plan order; the batches of different voices interleave as the plan does.
std::deque<std::vector<size_t>> make_batches(const std::vector<PlannedUtterance>& plan,
                                             const std::vector<size_t>& pending, size_t batch_size) {
    std::deque<std::vector<size_t>> batches;
    std::map<std::string, std::vector<size_t>> open;
    for (const size_t index : pending) {
        auto& batch = open[plan[index].utterance.voice];
        batch.push_back(index);
        if (batch.size() >= batch_size) {
            batches.push_back(std::move(batch));
            batch.clear();
        }
    }
    for (auto& [voice, batch] : open)
        if (!batch.empty()) batches.push_back(std::move(batch));
    return batches;
}

class SigpipeIgnored {
public:
    SigpipeIgnored() {
        struct sigaction ignore {};
        ignore.sa_handler = SIG_IGN;
        sigaction(SIGPIPE, &ignore, &previous_);
    }
    ~SigpipeIgnored() { sigaction(SIGPIPE, &previous_, nullptr); }

private:
    struct sigaction previous_ {};
};

}  // namespace

GenerationReport generate_corpus_audio(const std::vector<PlannedUtterance>& plan, const GenerationOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    GenerationReport report;
    report.planned = plan.size();
    std::vector<double> durations(plan.size(), -1.0);  // >= 0: the WAV file exists
    std::vector<size_t> pending;
    for (size_t i = 0; i < plan.size(); ++i) {
        const auto duration = probe_corpus_wav(plan[i].utterance.path);
        // A corpus made before phone alignments existed gets them by speaking again.
        if (duration && std::filesystem::exists(phone_alignment_path(plan[i].utterance.path))) {
            durations[i] = *duration;
            ++report.reused;
            report.reused_audio_seconds += *duration;
        } else {
            pending.push_back(i);
        }
    }

    const auto made_utterances = [&] {
        std::vector<Utterance> made;
        for (size_t i = 0; i < plan.size(); ++i) {
            if (durations[i] < 0.0) continue;
            made.push_back(plan[i].utterance);
            made.back().duration_seconds = durations[i];
        }
        return made;
    };

    if (!pending.empty()) {
        std::ostringstream discarded;
        std::ostream& stream = options.progress ? *options.progress : discarded;
        GenerationProgress progress(stream, options.progress && options.progress_on_terminal, plan.size(),
                                    report.reused, report.reused_audio_seconds);
        std::deque<std::vector<size_t>> batches =
            make_batches(plan, pending, std::max<size_t>(1, options.batch_size));
        const SigpipeIgnored sigpipe_ignored;
        const int jobs = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(1, options.jobs)), batches.size()));
        WorkerPool pool(plan, jobs, options.work_directory);
        size_t since_checkpoint = 0;

        const auto record = [&](size_t index, double duration, const std::string& error) {
            if (error.empty()) {
                durations[index] = duration;
                ++report.generated;
                report.generated_audio_seconds += duration;
                ++since_checkpoint;
                progress.record(true, duration);
                return;
            }
            ++report.failed;
            const PlannedUtterance& u = plan[index];
            const std::string message = u.utterance.voice + ", sentence " + u.sentence_id + " (" + u.utterance.id +
                                        "): " + error;
            if (report.errors.size() < errors_kept) report.errors.push_back(message);
            progress.record(false, 0.0);
            progress.message("cadenza: skipped: " + message);
        };

        for (;;) {
            bool busy = false;
            for (size_t slot = 0; slot < pool.workers().size(); ++slot) {
                Worker& worker = pool.workers()[slot];
                if (worker.batch.empty() && !batches.empty()) {
                    if (worker.pid < 0) pool.start(slot);
                    pool.assign(worker, std::move(batches.front()));
                    batches.pop_front();
                }
                busy = busy || !worker.batch.empty();
            }
            if (!busy) break;

            std::vector<pollfd> watched;
            std::vector<size_t> slots;
            for (size_t slot = 0; slot < pool.workers().size(); ++slot) {
                const Worker& worker = pool.workers()[slot];
                if (worker.pid < 0 || worker.batch.empty()) continue;
                watched.push_back({worker.results, POLLIN, 0});
                slots.push_back(slot);
            }
            const int ready = poll(watched.data(), watched.size(), 250);
            if (ready < 0 && errno != EINTR) throw std::runtime_error("waiting for the worker processes failed");
            for (size_t w = 0; ready > 0 && w < watched.size(); ++w) {
                if (!(watched[w].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                Worker& worker = pool.workers()[slots[w]];
                char chunk[4096];
                const ssize_t n = ::read(worker.results, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR) continue;
                if (n > 0) {
                    worker.buffer.append(chunk, static_cast<size_t>(n));
                    for (size_t newline; (newline = worker.buffer.find('\n')) != std::string::npos;) {
                        const std::string line = worker.buffer.substr(0, newline);
                        worker.buffer.erase(0, newline + 1);
                        const size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
                        if (tab1 == std::string::npos || tab2 == std::string::npos)
                            throw std::runtime_error("a worker process answered '" + line + "'");
                        const size_t index = std::stoul(line.substr(0, tab1));
                        size_t position = 0;
                        while (position < worker.batch.size() && worker.batch[position] != index) ++position;
                        if (position == worker.batch.size() || worker.answered[position])
                            throw std::runtime_error("a worker process answered for an utterance it was not given");
                        worker.answered[position] = true;
                        ++worker.answered_count;
                        record(index, std::stod(line.substr(tab1 + 1, tab2 - tab1 - 1)), line.substr(tab2 + 1));
                    }
                    if (worker.answered_count == worker.batch.size()) worker.batch.clear();
                    continue;
                }
                // The worker died (a synthesizer crash): the utterance it was
                // speaking fails, the rest of its batch goes back to the queue.
                const std::string how = pool.stop(worker);
                std::vector<size_t> unanswered;
                for (size_t i = 0; i < worker.batch.size(); ++i)
                    if (!worker.answered[i]) unanswered.push_back(worker.batch[i]);
                worker.batch.clear();
                if (!unanswered.empty()) {
                    record(unanswered.front(), 0.0, "the worker process " + how + " while speaking it");
                    if (unanswered.size() > 1) batches.emplace_front(unanswered.begin() + 1, unanswered.end());
                }
            }
            progress.tick();
            if (!options.manifest_path.empty() && since_checkpoint >= options.checkpoint_every) {
                write_corpus_manifest(options.manifest_path, made_utterances());
                since_checkpoint = 0;
            }
        }
        progress.finish();
    }
    std::error_code ignored;
    if (!options.work_directory.empty()) fs::remove_all(options.work_directory, ignored);
    report.utterances = made_utterances();
    report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return report;
}

}  // namespace cadenza::speech_corpus
