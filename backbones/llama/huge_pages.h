// Large CPU tensors backed by 2 MiB pages: streaming the weights of a model
// too large for the caches then misses the TLB 512 times less often (on the
// 150M benchmark model, 2-core Zen 5 VM: a one-token step 18.8-21.2 ms on
// 4 KiB pages, 17.9-19.3 ms on 2 MiB pages; 8 tokens 25-27 -> 23-24 ms).
// Only a hint to the kernel (Linux >= 6.1, MADV_COLLAPSE): the contents stay
// as they are, and where it is refused nothing changes.
#pragma once

#include <cstddef>
#include <vector>

#include <ATen/ATen.h>

namespace cadenza::llama {

// Asks for every whole 2 MiB page inside the CPU tensors' storage to be
// backed by a huge page, now (about 1 s per 400 MiB: done at load, so that
// it does not compete with the first passes for memory bandwidth). The
// environment variable CADENZA_HUGE_PAGES=0 turns it off. Returns the bytes
// the kernel collapsed.
size_t request_huge_pages(const std::vector<at::Tensor>& tensors);

}  // namespace cadenza::llama
