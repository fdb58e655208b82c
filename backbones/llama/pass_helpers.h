// Threads kept alive between passes that help the calling thread through a
// small pass (a decoding step or a verification: a few nodes), and the
// stages such a pass is split into.
//
// Why: en-small's 27 MB of weights sit in a 32 MB L3, and one core reads L3
// at ~70 GB/s where two read it at ~150 GB/s (a 28 MB sweep: 0.41 ms on
// one core, 0.20 ms on two). A one-node pass is that sweep, so a second
// core that streams half of every matrix nearly halves it. Starting threads
// per pass (parallel_parts.h, for the prompt's prefill) would cost more
// than such a pass saves.
//
// A pass is a sequence of stages, each split into shares. Every running
// part claims shares in turn until none are left, then waits until every
// share of the stage is done, whoever did it, before the next stage. A
// share computes the same bits whichever thread takes it, so the result
// does not depend on how many helpers came or when: a helper that another
// thread (the codec's) keeps off its core only leaves more shares to the
// caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace cadenza::llama {

// The stages of one pass.
class StagedShares {
public:
    // Before the pass is handed out (no thread in a stage): `stages` stages,
    // none begun.
    void reset(int stages);
    // Calls work(share) for every share of `stage` (of `shares`) this thread
    // claims, then returns once all of them are done. An exception from
    // work is kept (the first one), the share counts as done, and the pass
    // goes on to its end: PassHelpers::run rethrows it.
    template <class Work>
    void run(int stage, int shares, Work&& work) {
        Stage& s = stages_[static_cast<size_t>(stage)];
        for (int share; (share = s.next.fetch_add(1, std::memory_order_acq_rel)) < shares;) {
            try {
                work(share);
            } catch (...) {
                keep_failure(std::current_exception());
            }
            s.done.fetch_add(1, std::memory_order_acq_rel);
        }
        wait_until_done(s, shares);
    }
    // The first exception a share threw since reset, if any.
    std::exception_ptr failure() const;

private:
    struct alignas(64) Stage {
        std::atomic<int> next{0};  // the next share to claim
        alignas(64) std::atomic<int> done{0};
    };
    void wait_until_done(const Stage& stage, int shares) const;
    void keep_failure(std::exception_ptr error);

    std::unique_ptr<Stage[]> stages_;
    int capacity_ = 0;
    std::mutex failure_mutex_;
    std::exception_ptr failure_;
};

// `helpers` threads besides the caller's. A helper spins for a short while
// after each pass (the next one comes within a millisecond in a decoding
// loop), yielding its core to any other thread that wants it, then sleeps
// until the next pass.
class PassHelpers {
public:
    explicit PassHelpers(int helpers);
    ~PassHelpers();
    PassHelpers(const PassHelpers&) = delete;
    PassHelpers& operator=(const PassHelpers&) = delete;

    int helpers() const { return static_cast<int>(threads_.size()); }
    // The parts body may be called as: 0 (the caller) and 1..helpers().
    int parts() const { return helpers() + 1; }

    // Runs body(part, stages) on the calling thread as part 0 and on every
    // helper that comes before the caller's part returns; returns once
    // every part that started has returned, after `stages` was reset to
    // `stage_count` stages. A helper that comes later does not start. One
    // pass at a time: a call while another runs (another thread's) runs
    // body on its caller alone, with stages of its own.
    void run(int stage_count, const std::function<void(int part, StagedShares& stages)>& body);

private:
    enum : int { idle = 0, posted = 1, taken = 2, finished = 3 };
    struct alignas(64) Helper {
        std::atomic<int> state{idle};
    };
    void serve(int part);

    std::vector<std::thread> threads_;
    std::unique_ptr<Helper[]> helper_states_;
    StagedShares stages_;
    const std::function<void(int, StagedShares&)>* body_ = nullptr;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> sleeping_{0};
    std::atomic<bool> stopping_{false};
    std::mutex sleep_mutex_;
    std::condition_variable wake_;
    std::mutex pass_mutex_;  // one pass at a time through the helpers
};

}  // namespace cadenza::llama
