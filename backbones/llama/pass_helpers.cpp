#include "pass_helpers.h"

#include <chrono>
#include <system_error>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cadenza::llama {
namespace {

inline void pause() {
#if defined(__x86_64__)
    _mm_pause();
#endif
}

// A helper that has waited this long for a pass yields its core between
// looks; after the second, it sleeps until woken. A decoding loop's passes
// come every 0.2-1 ms.
constexpr auto spin_without_yielding = std::chrono::microseconds(50);
constexpr auto spin_before_sleeping = std::chrono::milliseconds(2);

// Waits for another thread that is working (a share, a helper's part):
// spins briefly, then yields, in case that thread lost its core to ours.
template <class Done>
void wait_for(Done done) {
    for (int spins = 0; !done(); ++spins)
        if (spins < 4096)
            pause();
        else
            std::this_thread::yield();
}

}  // namespace

void StagedShares::reset(int stages) {
    if (stages > capacity_) {
        stages_ = std::make_unique<Stage[]>(static_cast<size_t>(stages));
        capacity_ = stages;
    }
    for (int s = 0; s < stages; ++s) {
        stages_[static_cast<size_t>(s)].next.store(0, std::memory_order_relaxed);
        stages_[static_cast<size_t>(s)].done.store(0, std::memory_order_relaxed);
    }
    failure_ = nullptr;
}

void StagedShares::wait_until_done(const Stage& stage, int shares) const {
    wait_for([&] { return stage.done.load(std::memory_order_acquire) >= shares; });
}

void StagedShares::keep_failure(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    if (!failure_) failure_ = std::move(error);
}

std::exception_ptr StagedShares::failure() const { return failure_; }

PassHelpers::PassHelpers(int helpers)
    : helper_states_(std::make_unique<Helper[]>(static_cast<size_t>(helpers > 0 ? helpers : 0))) {
    try {
        for (int part = 1; part <= helpers; ++part) threads_.emplace_back([this, part] { serve(part); });
    } catch (const std::system_error&) {
        // Fewer helpers than asked: the passes run with the ones that started.
    }
}

PassHelpers::~PassHelpers() {
    {
        std::lock_guard<std::mutex> lock(sleep_mutex_);
        stopping_.store(true);
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
}

void PassHelpers::serve(int part) {
    Helper& self = helper_states_[static_cast<size_t>(part - 1)];
    // The generation the helpers were made at, not the current one: a pass
    // posted before this thread got here is still this helper's to join.
    uint64_t seen = 0;
    for (;;) {
        const auto since = std::chrono::steady_clock::now();
        for (int looks = 0; generation_.load(std::memory_order_acquire) == seen && !stopping_.load(); ++looks) {
            if (looks % 256 != 255) {
                pause();
                continue;
            }
            const auto waited = std::chrono::steady_clock::now() - since;
            if (waited < spin_without_yielding) continue;
            if (waited < spin_before_sleeping) {
                std::this_thread::yield();
                continue;
            }
            std::unique_lock<std::mutex> lock(sleep_mutex_);
            sleeping_.fetch_add(1);
            wake_.wait(lock, [&] { return generation_.load() != seen || stopping_.load(); });
            sleeping_.fetch_sub(1);
        }
        if (stopping_.load()) return;
        seen = generation_.load(std::memory_order_acquire);
        int expected = posted;
        if (!self.state.compare_exchange_strong(expected, taken, std::memory_order_acq_rel)) continue;  // too late
        (*body_)(part, stages_);
        self.state.store(finished, std::memory_order_release);
    }
}

void PassHelpers::run(int stage_count, const std::function<void(int, StagedShares&)>& body) {
    std::unique_lock<std::mutex> pass(pass_mutex_, std::try_to_lock);
    if (!pass.owns_lock() || threads_.empty()) {
        StagedShares own;
        own.reset(stage_count);
        body(0, own);
        if (own.failure()) std::rethrow_exception(own.failure());
        return;
    }
    stages_.reset(stage_count);
    body_ = &body;
    for (size_t i = 0; i < threads_.size(); ++i) helper_states_[i].state.store(posted, std::memory_order_release);
    generation_.fetch_add(1);
    if (sleeping_.load() > 0) {
        std::lock_guard<std::mutex> lock(sleep_mutex_);  // a helper between its look and its wait sees the new generation
        wake_.notify_all();
    }
    std::exception_ptr caller_failure;
    try {
        body(0, stages_);
    } catch (...) {
        caller_failure = std::current_exception();
    }
    for (size_t i = 0; i < threads_.size(); ++i) {
        int expected = posted;
        if (helper_states_[i].state.compare_exchange_strong(expected, idle, std::memory_order_acq_rel)) continue;
        wait_for([&] { return helper_states_[i].state.load(std::memory_order_acquire) == finished; });
        helper_states_[i].state.store(idle, std::memory_order_relaxed);
    }
    body_ = nullptr;
    if (caller_failure) std::rethrow_exception(caller_failure);
    if (stages_.failure()) std::rethrow_exception(stages_.failure());
}

}  // namespace cadenza::llama
