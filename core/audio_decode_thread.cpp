#include "audio_decode_thread.h"

#include <chrono>
#include <utility>

namespace cadenza {

AudioDecodeThread::AudioDecodeThread(DecodeChunk decode)
    : decode_(std::move(decode)), thread_([this] { run(); }) {}

AudioDecodeThread::~AudioDecodeThread() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
        pending_.clear();
    }
    work_.notify_one();
    thread_.join();
}

void AudioDecodeThread::submit(std::vector<int32_t> codes, bool last) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.push_back(Chunk{std::move(codes), last});
    }
    work_.notify_one();
}

std::vector<std::vector<float>> AudioDecodeThread::take_locked() {
    if (error_) std::rethrow_exception(error_);
    std::vector<std::vector<float>> pieces;
    pieces.swap(ready_);
    return pieces;
}

std::vector<std::vector<float>> AudioDecodeThread::take_ready() {
    std::lock_guard<std::mutex> lock(mutex_);
    return take_locked();
}

std::vector<std::vector<float>> AudioDecodeThread::wait_ready() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return error_ || !ready_.empty() || (pending_.empty() && !busy_); });
    return take_locked();
}

std::vector<std::vector<float>> AudioDecodeThread::finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return error_ || (pending_.empty() && !busy_); });
    return take_locked();
}

double AudioDecodeThread::decode_seconds() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return decode_seconds_;
}

void AudioDecodeThread::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        work_.wait(lock, [this] { return stop_ || (!pending_.empty() && !error_); });
        if (stop_) return;
        Chunk chunk = std::move(pending_.front());
        pending_.pop_front();
        busy_ = true;
        lock.unlock();
        const auto start = std::chrono::steady_clock::now();
        std::vector<float> audio;
        std::exception_ptr error;
        try {
            audio = decode_(chunk.codes, chunk.last);
        } catch (...) {
            error = std::current_exception();
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        lock.lock();
        busy_ = false;
        decode_seconds_ += seconds;
        if (error) {
            error_ = error;
            pending_.clear();
        } else {
            ready_.push_back(std::move(audio));
        }
        idle_.notify_all();  // a chunk is ready, or an error, or the queue ran empty
    }
}

}  // namespace cadenza
