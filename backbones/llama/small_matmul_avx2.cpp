// The small-m matmul kernel for AVX2 + FMA. This file alone is compiled with
// -mavx2 -mfma (and without the precompiled header): it runs only after
// kernel_supported(MatmulKernel::avx2) said yes.
#include <immintrin.h>

#include "small_matmul_kernel.h"

namespace cadenza::llama {
namespace {

struct Avx2 {
    using reg = __m256;
    using mask_t = __m256i;
    static constexpr int width = 8;
    // Weight rows streamed side by side for M rows of x: one, for every M.
    // AVX2 has 16 registers, and four rows (AVX-512's choice for M = 3, 4)
    // need M * 4 accumulators + 4 weight pieces + 1 piece of x: 17 and 21,
    // so they spill. Measured on en-small (27 MB, 2-core AMD EPYC without
    // AVX-512, `cadenza bench -p pipelines/ar.toml`, 200 repeats, three
    // interleaved rounds), ms for a pass of m = 4 after 267 tokens:
    // R = 4: 3.24 3.64 3.47; R = 2: 2.93 3.62 2.47; R = 1: 2.45 2.56 2.58
    // (m = 1: 1.7-1.9 ms in all three).
    template <int M>
    static constexpr int rows_per_block = 1;
    // One row ahead is 1 KB for en-small's 256-wide rows: too little to
    // cover memory's latency when a row takes as little time as M = 1 or 2
    // rows of x give it. The kernel alone, en-small's 43 matrices (27 MB),
    // ms per pass (min of 80, interleaved), ahead = 1 / 2 / 4 / 8 rows:
    // M = 1: 1.05 0.97 0.88 0.87; M = 2: 1.30 1.24 1.24 1.27; M = 3: 1.30
    // 1.35 1.44 1.46; M = 4: 1.55 1.52 1.58 1.86.
    template <int M>
    static constexpr int64_t prefetch_distance(int64_t block_floats) {
        return (M <= 2 ? 4 : 1) * block_floats;
    }

    static void prefetch(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
    static reg zero() { return _mm256_setzero_ps(); }
    static reg load(const float* p) { return _mm256_loadu_ps(p); }
    static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
    static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
    static mask_t mask(int64_t n) {
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static reg load_partial(const float* p, mask_t m) { return _mm256_maskload_ps(p, m); }
    static float sum(reg v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
        return _mm_cvtss_f32(s);
    }
};

}  // namespace

void matmul_rows_avx2(const float* x, int64_t m, int64_t x_stride, const float* weight, int64_t in, const float* bias,
                      float* y, int64_t y_stride, int64_t out_begin, int64_t out_end) {
    matmul_rows<Avx2>(x, m, x_stride, weight, in, bias, y, y_stride, out_begin, out_end);
}

}  // namespace cadenza::llama
