#include "draft_ahead_thread.h"

#include <chrono>
#include <stdexcept>
#include <utility>

namespace cadenza {

DraftAheadThread::DraftAheadThread() : thread_([this] { run(); }) {}

DraftAheadThread::~DraftAheadThread() {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return !running_; });
        stop_ = true;
    }
    work_.notify_one();
    thread_.join();
}

void DraftAheadThread::start(std::function<void()> job) {
    if (started_) throw std::logic_error("DraftAheadThread::start: the previous job was not waited for");
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = std::move(job);
        error_ = nullptr;
        running_ = true;
    }
    started_ = true;
    work_.notify_one();
}

double DraftAheadThread::wait() {
    if (!started_) return 0.0;
    started_ = false;
    const auto start = std::chrono::steady_clock::now();
    std::exception_ptr error;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return !running_; });
        error = std::exchange(error_, nullptr);
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (error) std::rethrow_exception(error);
    return waited;
}

void DraftAheadThread::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        work_.wait(lock, [this] { return stop_ || running_; });
        if (stop_) return;
        std::function<void()> job = std::move(job_);
        lock.unlock();
        std::exception_ptr error;
        try {
            job();
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        error_ = error;
        running_ = false;
        done_.notify_all();
    }
}

}  // namespace cadenza
