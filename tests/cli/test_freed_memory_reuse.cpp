// keep_freed_memory_for_reuse: a block larger than glibc's mmap threshold
// (32 MB at most) comes from the heap afterwards, so freeing it returns
// nothing to the system and the next step's block reuses its pages.
#include <gtest/gtest.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "freed_memory_reuse.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

#if defined(__GLIBC__)
// A 64 MB block is mmap'd by default (hblks counts the mmap'd blocks in use).
size_t mapped_blocks_while_holding(size_t bytes) {
    // volatile: the compiler may not drop the allocation it sees freed unread.
    char* volatile block = static_cast<char*>(std::malloc(bytes));
    std::memset(block, 1, bytes);
    const size_t mapped = mallinfo2().hblks;
    std::free(block);
    return mapped;
}

TEST(FreedMemoryReuse, LargeBlocksComeFromTheHeapAndStayThere) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's";
#endif
    constexpr size_t bytes = size_t{64} << 20;
    const size_t before = mallinfo2().hblks;
    ASSERT_EQ(mapped_blocks_while_holding(bytes), before + 1);  // glibc's default: its own mapping
    cadenza::cli::keep_freed_memory_for_reuse();
    EXPECT_EQ(mapped_blocks_while_holding(bytes), before);
    // Freed, it stays with the process: the heap still holds its pages.
    EXPECT_GE(mallinfo2().arena, bytes);
}
#endif

}  // namespace
