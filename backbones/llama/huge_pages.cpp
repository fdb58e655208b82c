#include "huge_pages.h"

#include <cstdint>
#include <cstdlib>
#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cadenza::llama {

size_t request_huge_pages(const std::vector<at::Tensor>& tensors) {
#if defined(__linux__)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
    if (const char* wanted = std::getenv("CADENZA_HUGE_PAGES"); wanted && std::strcmp(wanted, "0") == 0) return 0;
    constexpr uintptr_t huge = uintptr_t{2} << 20;
    size_t collapsed = 0;
    for (const at::Tensor& tensor : tensors) {
        if (!tensor.defined() || !tensor.device().is_cpu() || !tensor.has_storage()) continue;
        const auto begin = reinterpret_cast<uintptr_t>(tensor.storage().data());
        const uintptr_t first = (begin + huge - 1) & ~(huge - 1), last = (begin + tensor.storage().nbytes()) & ~(huge - 1);
        if (last <= first) continue;
        // Refused (an older kernel, THP off, no memory): the 4 KiB pages stay.
        if (madvise(reinterpret_cast<void*>(first), last - first, MADV_COLLAPSE) != 0) {
            if (errno == EINVAL) break;  // not supported here at all
            continue;
        }
        collapsed += last - first;
    }
    return collapsed;
#else
    (void)tensors;
    return 0;
#endif
}

}  // namespace cadenza::llama
