// The small-m matmul kernel, generic in the vector ISA. Included only by
// small_matmul_avx2.cpp and small_matmul_avx512.cpp, each compiled for its
// ISA alone: everything here is in an anonymous namespace and uses nothing
// from the standard library or ATen, so that no function compiled with
// wider instructions can be shared (as a weak symbol) with code that runs on
// any CPU.
//
// A vector traits type V provides: reg, width, zero(), load(p), fma(a, b, c)
// = a * b + c, add(a, b), prefetch(p), mask_t, mask(n) for the first n lanes,
// load_partial(p, mask) (zero beyond n, reading nothing there), sum(reg),
// rows_per_block<M>: how many weight rows one block streams side by side for
// M rows of x, and prefetch_distance<M>(block_floats): how many floats ahead
// of each piece being multiplied the kernel prefetches, given a block's size
// (both chosen by measurement, see the ISA's file).
#pragma once

#include <cstdint>

namespace cadenza::llama {

// The kernels, one per translation unit compiled for its ISA: x row i at
// x + i * x_stride, y row i at y + i * y_stride; output columns
// [out_begin, out_end) only, on the calling thread.
void matmul_rows_avx2(const float* x, int64_t m, int64_t x_stride, const float* weight, int64_t in, const float* bias,
                      float* y, int64_t y_stride, int64_t out_begin, int64_t out_end);
void matmul_rows_avx512(const float* x, int64_t m, int64_t x_stride, const float* weight, int64_t in, const float* bias,
                        float* y, int64_t y_stride, int64_t out_begin, int64_t out_end);

namespace {

// Output columns [o, o + R) for M rows of x: each of the R weight rows is
// read once, in `width`-float pieces, and multiplied into all M rows. With
// fewer than 4 accumulators, U of them per output take alternate pieces so
// that the additions do not wait on one another.
template <class V, int M, int R>
inline void matmul_block(const float* x, int64_t x_stride, const float* weight, int64_t in, const float* bias,
                         float* y, int64_t y_stride, int64_t o) {
    using reg = typename V::reg;
    constexpr int U = M * R >= 4 ? 1 : 4 / (M * R);
    constexpr int W = V::width;
    reg acc[U][M][R];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 16
        for (int i = 0; i < M; ++i)
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) acc[u][i][r] = V::zero();
    const float* w = weight + o * in;
    // The R rows are R short streams that restart every block, which the
    // hardware prefetcher follows poorly: each piece of them is fetched
    // prefetch_distance floats ahead, into L1 (prefetches past the end do not
    // fault).
    const float* next = w + V::template prefetch_distance<M>(R * in);
    // One piece at k of every row into acc[u], the loads done by `load`.
    auto piece = [&](int u, int64_t k, auto load) {
        reg wr[R];
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) wr[r] = load(w + r * in + k);
#pragma GCC unroll 16
        for (int i = 0; i < M; ++i) {
            const reg xi = load(x + i * x_stride + k);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) acc[u][i][r] = V::fma(xi, wr[r], acc[u][i][r]);
        }
    };
    const auto whole = [](const float* p) { return V::load(p); };
    int64_t k = 0;
    for (; k + U * W <= in; k += U * W) {
#pragma GCC unroll 16
        for (int u = 0; u < U; ++u) {
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) V::prefetch(next + r * in + k + u * W);
            piece(u, k + u * W, whole);
        }
    }
    // What is left: whole pieces, then a partial one.
    for (; k + W <= in; k += W) piece(0, k, whole);
    if (k < in) {
        const typename V::mask_t tail = V::mask(in - k);
        piece(0, k, [tail](const float* p) { return V::load_partial(p, tail); });
    }
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i)
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            reg total = acc[0][i][r];
#pragma GCC unroll 16
            for (int u = 1; u < U; ++u) total = V::add(total, acc[u][i][r]);
            y[i * y_stride + o + r] = V::sum(total) + (bias ? bias[o + r] : 0.0f);
        }
}

// Output columns [begin, end) for M rows of x.
template <class V, int M>
inline void matmul_columns(const float* x, int64_t x_stride, const float* weight, int64_t in, const float* bias,
                           float* y, int64_t y_stride, int64_t begin, int64_t end) {
    constexpr int R = V::template rows_per_block<M>;
    int64_t o = begin;
    for (; o + R <= end; o += R) matmul_block<V, M, R>(x, x_stride, weight, in, bias, y, y_stride, o);
    for (; o < end; ++o) matmul_block<V, M, 1>(x, x_stride, weight, in, bias, y, y_stride, o);
}

template <class V>
inline void matmul_columns_any(int m, const float* x, int64_t x_stride, const float* weight, int64_t in,
                               const float* bias, float* y, int64_t y_stride, int64_t begin, int64_t end) {
    switch (m) {
        case 1: return matmul_columns<V, 1>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 2: return matmul_columns<V, 2>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 3: return matmul_columns<V, 3>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 4: return matmul_columns<V, 4>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 5: return matmul_columns<V, 5>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 6: return matmul_columns<V, 6>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        case 7: return matmul_columns<V, 7>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
        default: return matmul_columns<V, 8>(x, x_stride, weight, in, bias, y, y_stride, begin, end);
    }
}

// Rows of x are taken in groups of at most 8 (balanced: 12 = 6 + 6). With
// one group the weights stream once from memory; with several, a tile of
// weight rows is finished by every group while it sits in L1/L2, so the
// weights still stream from memory once.
template <class V>
inline void matmul_rows(const float* x, int64_t m, int64_t x_stride, const float* weight, int64_t in,
                        const float* bias, float* y, int64_t y_stride, int64_t out_begin, int64_t out_end) {
    constexpr int64_t most = 8;
    const int64_t groups = (m + most - 1) / most;
    const int64_t size = (m + groups - 1) / groups;
    if (groups == 1) {
        matmul_columns_any<V>(static_cast<int>(m), x, x_stride, weight, in, bias, y, y_stride, out_begin, out_end);
        return;
    }
    // Weight rows per tile: two blocks of four (at most 80 KiB at in = 2560),
    // read from memory by the first group and from L1/L2 by the others.
    constexpr int64_t tile = 8;
    for (int64_t begin = out_begin; begin < out_end; begin += tile) {
        const int64_t end = begin + tile < out_end ? begin + tile : out_end;
        for (int64_t first = 0; first < m; first += size) {
            const int64_t rows = m - first < size ? m - first : size;
            matmul_columns_any<V>(static_cast<int>(rows), x + first * x_stride, x_stride, weight, in, bias,
                                  y + first * y_stride, y_stride, begin, end);
        }
    }
}

}  // namespace
}  // namespace cadenza::llama
