// combine_rows and combine_panels for AVX2 with FMA and F16C, for CPUs
// without AVX-512F. This file alone is compiled with -mavx2 -mfma -mf16c (and
// without the precompiled header), and uses nothing from the standard
// library. Each output is summed over k in order by one multiply-add per
// term from zero, as the AVX-512 kernels sum it: the two give the same bits.
#include <immintrin.h>

#include "row_blocks.h"
#include "row_combinations.h"

namespace cadenza::llama {
namespace {

// A block of R rows of out takes C pieces of 8 columns, its R * C sums in
// registers (16 in all): one row takes 8 pieces, two 4, three 4 of float32
// (one sum spilled; faster, measured, than 2) or 2 of float16 (whose
// conversions need registers too), four to six 2. At least 8 sums are
// independent but for three rows of float16, which hides most of the
// multiply-adds' latency.
template <int R, class B>
constexpr int pieces_for_rows() {
    return R == 1 ? 8 : R == 2 ? 4 : R == 3 && sizeof(B) == 4 ? 4 : 2;
}

// With Prefetch, each block prefetches the lines of its own columns this
// many bytes ahead in b: a panel (one contiguous stream of 64-entry rows) or
// the value rows, both taken a chunk of rows at a time (below), so that the
// blocks of a chunk fetch the lines of the rows ahead together.
constexpr int64_t prefetch_bytes = 12288;

inline __m256i lanes_below(int64_t tail) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(tail)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// An 8-entry piece of a row of b, as float32: b in float32, or in float16
// converted on load (the tail piece copied into zeros first).
inline __m256 load_piece(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load_piece(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 load_tail_piece(const float* p, int64_t tail) { return _mm256_maskload_ps(p, lanes_below(tail)); }
inline __m256 load_tail_piece(const uint16_t* p, int64_t tail) {
    uint16_t piece[8] = {};
    for (int64_t i = 0; i < tail; ++i) piece[i] = p[i];
    return load_piece(piece);
}

// sum[r][c] += a[r][k] * piece[c], each row's weight broadcast once for all
// the pieces: one multiply-add per term, in the order of k.
template <int R, int C>
inline void add_row_products(__m256 (&sum)[R][C], const float* a, int64_t a_stride, int64_t k,
                             const __m256 (&piece)[C]) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        const __m256 weight = _mm256_broadcast_ss(a + r * a_stride + k);
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) sum[r][c] = _mm256_fmadd_ps(weight, piece[c], sum[r][c]);
    }
}

// Rows r < R of out, columns [first, first + 8 C), the last piece only its
// first `tail` lanes when Tail. With `resume`, the sums start from what out
// holds (the same rows' sums over the earlier terms, stored as floats: the
// same bits as had they stayed in registers).
template <int R, int C, bool Tail, bool Prefetch, class B>
inline void combine_block(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                          int64_t first, int64_t tail, float* out, int64_t out_stride, bool resume = false) {
    constexpr int64_t lines = (8 * C * static_cast<int64_t>(sizeof(B)) + 63) / 64;
    __m256 sum[R][C];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            const float* from = out + r * out_stride + first + 8 * c;
            sum[r][c] = !resume                ? _mm256_setzero_ps()
                        : Tail && c == C - 1 ? _mm256_maskload_ps(from, lanes_below(tail))
                                             : _mm256_loadu_ps(from);
        }
    for (int64_t k = 0; k < count; ++k) {
        const B* row = b + k * b_stride + first;
        if constexpr (Prefetch) {
            const char* ahead = reinterpret_cast<const char*>(row) + prefetch_bytes;
#pragma GCC unroll 4
            for (int64_t l = 0; l < lines; ++l) _mm_prefetch(ahead + 64 * l, _MM_HINT_T0);
        }
        __m256 piece[C];
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c)
            piece[c] = Tail && c == C - 1 ? load_tail_piece(row + 8 * c, tail) : load_piece(row + 8 * c);
        add_row_products<R, C>(sum, a, a_stride, k, piece);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            float* to = out + r * out_stride + first + 8 * c;
            if (Tail && c == C - 1)
                _mm256_maskstore_ps(to, lanes_below(tail), sum[r][c]);
            else
                _mm256_storeu_ps(to, sum[r][c]);
        }
}

template <int R, bool Tail, bool Prefetch, class B>
inline void combine_rest(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                         int64_t first, int64_t pieces, int64_t tail, float* out, int64_t out_stride, bool resume) {
#define CADENZA_COMBINE_REST(C)                                                                                    \
    case C:                                                                                                        \
        if constexpr (C <= pieces_for_rows<R, B>())                                                                   \
            combine_block<R, C, Tail, Prefetch>(a, a_stride, b, count, b_stride, first, tail, out, out_stride,    \
                                                resume);                                                           \
        return;
    switch (pieces) {
        CADENZA_COMBINE_REST(1)
        CADENZA_COMBINE_REST(2)
        CADENZA_COMBINE_REST(3)
        CADENZA_COMBINE_REST(4)
        CADENZA_COMBINE_REST(5)
        CADENZA_COMBINE_REST(6)
        CADENZA_COMBINE_REST(7)
        CADENZA_COMBINE_REST(8)
        default: return;
    }
#undef CADENZA_COMBINE_REST
}

// Rows [0, R) of out, columns [0, width): whole blocks of 8 C columns, then
// what is left in one block of fewer pieces, its last piece masked.
template <int R, bool Prefetch, class B>
inline void combine_rows_of(const float* a, int64_t a_stride, const B* b, int64_t count, int64_t b_stride,
                            int64_t width, float* out, int64_t out_stride, bool resume = false) {
    constexpr int C = pieces_for_rows<R, B>();
    int64_t first = 0;
    for (; first + 8 * C <= width; first += 8 * C)
        combine_block<R, C, false, Prefetch>(a, a_stride, b, count, b_stride, first, 0, out, out_stride, resume);
    const int64_t left = width - first, tail = left % 8;
    if (tail > 0)
        combine_rest<R, true, Prefetch>(a, a_stride, b, count, b_stride, first, left / 8 + 1, tail, out, out_stride,
                                        resume);
    else
        combine_rest<R, false, Prefetch>(a, a_stride, b, count, b_stride, first, left / 8, 0, out, out_stride,
                                         resume);
}

// A panel's rows are taken `panel_chunk` at a time (16 KiB of float32):
// every block of rows and columns finishes a chunk while it is in L1, so
// that the column blocks after the first do not sweep the panel again from
// L2 or beyond.
constexpr int64_t panel_chunk = 64;

// The most rows a block of a 64-wide panel takes (the key panels; the
// projections' float32 panels are narrow, below). Float32 panels go three
// rows at a time (each of 4 pieces): 4 to 6 rows are two blocks that each read 128
// contiguous bytes a k, the second from L1 (the chunk the first just read),
// rather than one block reading 64 with a stride of 256. Measured on a Zen 3
// over en-small's projections, interleaved: 4-6 rows took 0.71-0.84 of the
// time (m = 5: 1.23-1.34 against 1.46-1.75 ms), 8 rows 0.96; four rows of 3
// pieces were slower than 3 + 1. Float16 panels, whose conversions bind
// first, keep blocks of up to 6 (blocks of 3 took 1.17-1.26 times as long).
template <class B>
constexpr int panel_block_rows() {
    return sizeof(B) == 4 ? 3 : 6;
}

template <class B>
inline void combine_panels_of(const float* x, int64_t m, int64_t x_stride, const B* panels, int64_t in, int64_t out,
                              float* y, int64_t y_stride) {
    for (int64_t first = 0; first < out; first += 64) {
        const B* panel = panels + (first / 64) * in * 64;
        const int64_t width = out - first < 64 ? out - first : 64;
        for (int64_t k = 0; k < in; k += panel_chunk) {
            const int64_t count = in - k < panel_chunk ? in - k : panel_chunk;
            in_blocks_of<panel_block_rows<B>()>(m, [&](auto rows, int64_t r) {
                combine_rows_of<decltype(rows)::value, true>(x + r * x_stride + k, x_stride, panel + k * 64, count,
                                                              64, width, y + r * y_stride + first, y_stride, k > 0);
            });
        }
    }
}

// Narrow panels ([in, 16] each, row_combinations.h): a block of R rows takes
// P panels side by side, two pieces of each, its R * 2P sums in registers
// (at most 12): six rows take one panel, one row four, two or three rows
// two. Each k row of a panel is one 64-byte line, so a block reads each of
// its panels as one contiguous stream, and all R rows share each load.
// Measured on a Zen 3 over en-small's projections (27.3 MB, interleaved with
// the 64-wide panels): 2-6 rows took 0.61-0.70 of the time, one row
// 0.75-0.99; 8 and 9 rows (6 + 2, 6 + 3) 0.90-0.97. Beyond six rows the
// blocks are even (in_even_blocks_of): a block of one row keeps two sums, a
// chain of multiply-adds each waiting for the last, and 7 rows as 6 + 1
// took 1.44 ms against 1.32 ms as 4 + 3, 8 rows 1.47 ms against 1.32 ms
// as 4 + 4 (build/bin/matmul_speed, three alternating runs; the int8
// panels' blocks of four did not gain that way).
constexpr int64_t narrow_width = narrow_panel_width;

// A panel's rows are taken this many at a time (8 KiB of a panel): every
// block of rows finishes them while they are in L1, so that the blocks after
// the first (of the rows beyond six) do not read the panel again from memory.
constexpr int64_t narrow_chunk = 128;

// The first block of rows prefetches each of its panels this far ahead.
constexpr int64_t narrow_prefetch_bytes = 4096;

template <int R>
constexpr int narrow_panels_for_rows() {
    return R == 1 ? 4 : R <= 3 ? 2 : 1;
}

// The lanes of piece c (8 columns from 8 c) below `columns` valid columns.
inline int narrow_lanes(int64_t columns, int c) {
    const int64_t lanes = columns - 8 * c;
    return lanes <= 0 ? 0 : lanes >= 8 ? 8 : static_cast<int>(lanes);
}

// Rows r < R of y, the columns of P panels from `panel` (the k rows [0,
// count) of each, panel p at panel + p * panel_stride), the last panel only
// its first `columns` - 16 (P - 1) columns. With `resume`, the sums start
// from what y holds (the same bits as had they stayed in registers). Always
// inlined: GCC stopped inlining it when the value rows' chunks (below) added
// kernels to this file, and build/bin/matmul_speed's 6 and 8 rows then took
// 2-4% longer (0.97-0.99 against 0.94-0.95 ms at 6 rows, three runs).
template <int R, int P>
[[gnu::always_inline]] inline void combine_narrow_block(const float* x, int64_t x_stride, const float* panel,
                                                        int64_t panel_stride, int64_t count, int64_t columns, float* y,
                                                        int64_t y_stride, bool resume, bool prefetch) {
    constexpr int C = 2 * P;
    int lanes[C];
    for (int c = 0; c < C; ++c) lanes[c] = narrow_lanes(columns, c);
    __m256 sum[R][C];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            const float* from = y + r * y_stride + 8 * c;
            sum[r][c] = !resume || lanes[c] == 0 ? _mm256_setzero_ps()
                        : lanes[c] == 8         ? _mm256_loadu_ps(from)
                                                : _mm256_maskload_ps(from, lanes_below(lanes[c]));
        }
    for (int64_t k = 0; k < count; ++k) {
        __m256 piece[C];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
            const float* row = panel + p * panel_stride + k * narrow_width;
            if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(row) + narrow_prefetch_bytes, _MM_HINT_T0);
            piece[2 * p] = _mm256_loadu_ps(row);
            piece[2 * p + 1] = _mm256_loadu_ps(row + 8);
        }
        add_row_products<R, C>(sum, x, x_stride, k, piece);
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            float* to = y + r * y_stride + 8 * c;
            if (lanes[c] == 8)
                _mm256_storeu_ps(to, sum[r][c]);
            else if (lanes[c] > 0)
                _mm256_maskstore_ps(to, lanes_below(lanes[c]), sum[r][c]);
        }
}

// P panels at a time (the last group as many as are left), each group a
// chunk of k rows at a time, every block of rows through the chunk.
template <int P>
inline void combine_narrow_panels_with(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in,
                                       int64_t out, float* y, int64_t y_stride) {
    for (int64_t first = 0; first < out; first += P * narrow_width) {
        const int64_t left = (out - first + narrow_width - 1) / narrow_width;
        auto group = [&](auto panels_here, int64_t) {
            constexpr int group_panels = decltype(panels_here)::value;
            for (int64_t k = 0; k < in; k += narrow_chunk) {
                const int64_t count = in - k < narrow_chunk ? in - k : narrow_chunk;
                auto rows_from = [&](auto rows, int64_t r) {
                    combine_narrow_block<decltype(rows)::value, group_panels>(
                        x + r * x_stride + k, x_stride, panels + first * in + k * narrow_width, in * narrow_width,
                        count, out - first, y + r * y_stride + first, y_stride, k > 0, r == 0);
                };
                in_even_blocks_of<6>(m, rows_from);
            }
        };
        if (left >= P)
            group(RowCount<P>{}, 0);
        else
            with_row_count<P>(left, 0, group);
    }
}

// From four rows on, a block of rows takes 16 columns (pieces_for_rows), so
// four blocks of columns each read one line of every 256-byte row of b (the
// attention's float32 value rows) as a strided stream, and a second block of
// rows reads them all again. Those rows of b are taken `panel_chunk` at a
// time instead, every block of rows and columns through a chunk while it is
// in L1, each block prefetching its line of the rows ahead. Measured on a
// Zen 3: build/bin/attention_speed (12 heads' keys and values evicted first;
// medians of 4 interleaved runs) took 0.19 against 0.25 ms for 4 query rows
// at 600 positions, 0.24 against 0.43 ms for 12; in default's loop (perf,
// 20 texts, three alternating runs) the attention's kernels lost a fifth of
// their samples. One to three rows (one or two blocks of columns) keep the
// single sweep: chunked, the two query rows of a one-token pass took up to
// 10% longer, prefetched 15-20%.
template <class B>
inline void combine_rows_in_blocks(const float* a, int64_t rows, int64_t a_stride, const B* b, int64_t count,
                                   int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    if (rows < 4) {
        in_blocks_of<6>(rows, [&](auto block, int64_t r) {
            combine_rows_of<decltype(block)::value, false>(a + r * a_stride, a_stride, b, count, b_stride, width,
                                                           out + r * out_stride, out_stride);
        });
        return;
    }
    int64_t k = 0;
    do {  // once with no rows of b: the sums of nothing, zeros
        const int64_t chunk = count - k < panel_chunk ? count - k : panel_chunk;
        in_blocks_of<6>(rows, [&](auto block, int64_t r) {
            combine_rows_of<decltype(block)::value, true>(a + r * a_stride + k, a_stride, b + k * b_stride, chunk,
                                                          b_stride, width, out + r * out_stride, out_stride, k > 0);
        });
        k += chunk;
    } while (k < count);
}

}  // namespace

void combine_rows_avx2(const float* a, int64_t rows, int64_t a_stride, const float* b, int64_t count,
                       int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    combine_rows_in_blocks(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
}

void combine_half_rows_avx2(const float* a, int64_t rows, int64_t a_stride, const uint16_t* b, int64_t count,
                            int64_t b_stride, int64_t width, float* out, int64_t out_stride) {
    combine_rows_in_blocks(a, rows, a_stride, b, count, b_stride, width, out, out_stride);
}

void combine_panels_avx2(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in, int64_t out,
                         float* y, int64_t y_stride) {
    combine_panels_of(x, m, x_stride, panels, in, out, y, y_stride);
}

void combine_narrow_panels_avx2(const float* x, int64_t m, int64_t x_stride, const float* panels, int64_t in,
                                int64_t out, float* y, int64_t y_stride) {
    // Every block of rows takes as many panels at a time as the first: a
    // block of fewer rows beyond six keeps fewer sums, not other panels.
    constexpr int one_row = narrow_panels_for_rows<1>(), few_rows = narrow_panels_for_rows<3>();
    if (m == 1) return combine_narrow_panels_with<one_row>(x, m, x_stride, panels, in, out, y, y_stride);
    if (m <= 3) return combine_narrow_panels_with<few_rows>(x, m, x_stride, panels, in, out, y, y_stride);
    combine_narrow_panels_with<1>(x, m, x_stride, panels, in, out, y, y_stride);
}

void combine_half_panels_avx2(const float* x, int64_t m, int64_t x_stride, const uint16_t* panels, int64_t in,
                              int64_t out, float* y, int64_t y_stride) {
    combine_panels_of(x, m, x_stride, panels, in, out, y, y_stride);
}

}  // namespace cadenza::llama
