// Runs one job at a time on a thread of its own while the caller goes on:
// the decoding loop's proposal of the next step, made beside the target's
// verifying pass of this one (PipelineConfig::draft_ahead). The job's
// result is a function of its inputs alone, never of timing: the caller
// always waits for it before it reads what the job wrote.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace cadenza {

class DraftAheadThread {
public:
    DraftAheadThread();
    // Waits for a running job (its error is dropped) and joins the thread.
    ~DraftAheadThread();
    DraftAheadThread(const DraftAheadThread&) = delete;
    DraftAheadThread& operator=(const DraftAheadThread&) = delete;

    // Starts `job`; the previous one must have been waited for.
    void start(std::function<void()> job);
    // Whether a job was started and not yet waited for.
    bool started() const { return started_; }
    // Waits for the started job; rethrows what it threw. Returns the seconds
    // the caller waited.
    double wait();

private:
    void run();

    std::mutex mutex_;
    std::condition_variable work_;  // a job arrived, or stop
    std::condition_variable done_;  // the job finished
    std::function<void()> job_;
    std::exception_ptr error_;
    bool running_ = false;
    bool started_ = false;  // the caller's view: touched by the caller only
    bool stop_ = false;
    std::thread thread_;  // last: starts once the members above exist
};

}  // namespace cadenza
