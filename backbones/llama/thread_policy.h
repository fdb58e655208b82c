// Thread counts for LibTorch on a few cores: LibTorch's OpenMP threads do
// the parallel work and OpenBLAS is held to one thread of its own, because
// the two pools together oversubscribe the cores (measured: a 12-layer
// decode step went from 11 ms to 100 ms on 2 cores).
#pragma once

namespace cadenza::llama {

// `threads` <= 0 means one per hardware core. Idempotent; returns the
// intra-op thread count in force.
int apply_thread_policy(int threads);

}  // namespace cadenza::llama
