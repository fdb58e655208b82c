#include "parallel_parts.h"

#include <exception>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace cadenza::llama {
namespace {

struct BrokenBarrier : std::runtime_error {
    BrokenBarrier() : std::runtime_error("another part of the run failed") {}
};

}  // namespace

void PartBarrier::arrive_and_wait() {
    if (broken_.load(std::memory_order_acquire)) throw BrokenBarrier();
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (waiting_.fetch_add(1, std::memory_order_acq_rel) == parties_ - 1) {
        waiting_.store(0, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        return;
    }
    for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
        if (broken_.load(std::memory_order_acquire)) throw BrokenBarrier();
        if (spins >= 4096) std::this_thread::yield();
    }
}

void run_parts(int parts, const std::function<void(int part, int parts, PartBarrier& barrier)>& body) {
    if (parts < 1) parts = 1;
    std::vector<std::exception_ptr> failure(static_cast<size_t>(parts));
    std::atomic<int> start{0};  // 0: wait, 1: go, -1: cancelled
    PartBarrier* barrier = nullptr;
    auto run_part = [&](int part) {
        try {
            body(part, parts, *barrier);
        } catch (const BrokenBarrier&) {
        } catch (...) {
            failure[static_cast<size_t>(part)] = std::current_exception();
            barrier->break_for_all();
        }
    };
    auto run_other_part = [&](int part) {
        while (start.load(std::memory_order_acquire) == 0) std::this_thread::yield();
        if (start.load(std::memory_order_acquire) > 0) run_part(part);
    };
    std::vector<std::thread> others;
    try {
        others.reserve(static_cast<size_t>(parts - 1));
        for (int part = 1; part < parts; ++part) others.emplace_back(run_other_part, part);
    } catch (const std::system_error&) {
        start.store(-1, std::memory_order_release);
        for (std::thread& thread : others) thread.join();
        others.clear();
        parts = 1;
    }
    PartBarrier shared(parts);
    barrier = &shared;
    if (parts > 1) start.store(1, std::memory_order_release);
    run_part(0);
    for (std::thread& thread : others) thread.join();
    for (const std::exception_ptr& error : failure)
        if (error) std::rethrow_exception(error);
}

}  // namespace cadenza::llama
