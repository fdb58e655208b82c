// A kernel's rows in blocks of a compile-time count: the sums of a block's
// rows stay in registers, and each load of the other operand serves them all.
// Used by the AVX-512 and AVX2 kernels alone; nothing here needs the standard library.
#pragma once

#include <cstdint>

namespace cadenza::llama {

template <int R>
struct RowCount {
    static constexpr int value = R;
};

template <int Max, int R = 1, class Body>
inline void with_row_count(int64_t count, int64_t first, Body& body) {
    if constexpr (R == Max)
        body(RowCount<Max>{}, first);
    else if (count == R)
        body(RowCount<R>{}, first);
    else
        with_row_count<Max, R + 1>(count, first, body);
}

// body(RowCount<R>{}, r) for the rows [r, r + R) of `rows`, R at most Max;
// a second block of rows reads the other operand again, from L1/L2.
template <int Max, class Body>
inline void in_blocks_of(int64_t rows, Body body) {
    for (int64_t r = 0; r < rows; r += Max) with_row_count<Max>(rows - r, r, body);
}

// in_blocks_of with the fewest blocks of sizes as equal as they can be (7
// rows of at most 6: 4 + 3, not 6 + 1), for a kernel whose block of one or
// two rows keeps too few independent sums to hide the multiply-adds'
// latency. The rows of each block are summed as in_blocks_of sums them.
template <int Max, class Body>
inline void in_even_blocks_of(int64_t rows, Body body) {
    const int64_t blocks = (rows + Max - 1) / Max;
    for (int64_t b = 0, r = 0; b < blocks; ++b) {
        const int64_t size = (rows - r + (blocks - b) - 1) / (blocks - b);
        with_row_count<Max>(size, r, body);
        r += size;
    }
}

}  // namespace cadenza::llama
