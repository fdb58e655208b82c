// Work split into parts that run at once, one per thread, and meet at
// barriers between stages: the prompt's prefill (cpu_tree_pass.h) and the
// mel codec's encoder (MelConvolutionStack::run) split their rows this way.
// Each part computes its own rows exactly as one thread computes them all,
// so a result does not depend on the number of parts.
#pragma once

#include <atomic>
#include <functional>

namespace cadenza::llama {

// The parts of one run meeting between stages. The waits are short (each
// part has an equal share of the rows), so a waiter spins before it yields.
// A part that fails breaks the barrier: the parts waiting at it, or
// arriving later, leave by an exception instead of waiting forever.
class PartBarrier {
public:
    explicit PartBarrier(int parties) : parties_(parties) {}

    void arrive_and_wait();
    void break_for_all() { broken_.store(true, std::memory_order_release); }

private:
    const int parties_;
    std::atomic<int> waiting_{0};
    std::atomic<unsigned> generation_{0};
    std::atomic<bool> broken_{false};
};

// Calls body(part, parts, barrier) for every part in [0, parts), part 0 on
// the calling thread and the others on new threads, and returns once all
// have returned; rethrows the first exception a part threw (other than the
// broken barrier's). If a thread cannot be created, no other part starts and
// the caller runs the whole as one part (parts = 1).
void run_parts(int parts, const std::function<void(int part, int parts, PartBarrier& barrier)>& body);

// The first row of part `part` when `rows` are split into `parts` equal shares.
inline long long part_begin(long long rows, int part, int parts) { return rows * part / parts; }

}  // namespace cadenza::llama
