// A training step allocates and frees the same large tensors every step
// (en-small's [batch x time x vocabulary] rows: ~200 MB each). glibc maps
// every block above 32 MB afresh and returns it at free, so each step
// faults its pages in again: half of a step's time went to the kernel.
#pragma once

namespace cadenza::cli {

// From now on the process keeps what it frees on its heap and reuses it
// (glibc: no mmap'd blocks, no trimming); elsewhere nothing changes. The
// results are the same bits; the process holds its peak memory until it ends.
void keep_freed_memory_for_reuse();

}  // namespace cadenza::cli
