// The small-m matmul kernel for AVX-512F. This file alone is compiled with
// -mavx512f -mavx2 -mfma (and without the precompiled header): it runs only
// after kernel_supported(MatmulKernel::avx512) said yes.
#include <immintrin.h>

#include "small_matmul_kernel.h"

namespace cadenza::llama {
namespace {

struct Avx512 {
    using reg = __m512;
    using mask_t = __mmask16;
    static constexpr int width = 16;
    // Weight rows streamed side by side for M rows of x. Measured on a
    // 2-core Zen 5 VM, GB/s of weights from DRAM on 2 threads, best of 4
    // interleaved rounds, in = 768 (2560 alike), R = rows per block:
    //   M   R=1   R=2   R=3   R=4   R=6   R=8
    //   1  46.8  38.6  37.3  37.6  39.8  40.3
    //   2  43.4  33.9  33.1  35.8  34.9  35.9
    //   4  29.1  30.5  32.3  31.1  35.6  32.0
    //   6  19.7  23.9  22.3  34.2  34.9  33.2
    //   8  17.6  18.1  17.4  33.4  31.1  31.5
    // Fewer than four streams starve the prefetchers once M rows of x make
    // each piece slow; 4 rows keep M * R accumulators near the 32 registers.
    template <int M>
    static constexpr int rows_per_block = M <= 2 ? 1 : 4;
    // Floats ahead of each piece that are prefetched: 12 KB whatever the
    // block (for M <= 2, 12 rows of a 256-wide matrix or 4 of a 768-wide
    // one; for M >= 3, 3 blocks of four 256-wide rows or 1 of four
    // 768-wide). In the decoding loop the weights come from memory (what
    // runs between passes evicts part of them from L3), ms per en-small pass
    // with attention and logits, `cadenza bench --texts` on 12 texts, same
    // 2-core Zen 5 VM, rounds alternating, floats ahead:
    //              1 block    2048       2560       3072       3584       4096       6144
    //   m = 1:   0.75-0.78  0.58-0.59  0.60-0.62  0.51-0.55  0.57       0.51-0.53  0.53-0.56
    //   m = 5:   1.06-1.10  0.92-1.03  0.89-1.04  0.79-0.93  0.92-1.01  0.89-0.92  1.03-1.07
    // bin/matmul_speed, whose weights stay in L3, had found one block best.
    template <int M>
    static constexpr int64_t prefetch_distance(int64_t /*block_floats*/) {
        return 3072;
    }

    static void prefetch(const float* p) { _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0); }
    static reg zero() { return _mm512_setzero_ps(); }
    static reg load(const float* p) { return _mm512_loadu_ps(p); }
    static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
    static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
    static mask_t mask(int64_t n) { return static_cast<mask_t>((1u << n) - 1u); }
    static reg load_partial(const float* p, mask_t m) { return _mm512_maskz_loadu_ps(m, p); }
    static float sum(reg v) {
        // Through memory: GCC 12's 512-to-256-bit extracts warn (-Wuninitialized) on _mm256_undefined_pd.
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, v);
        __m256 half = _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
        return _mm_cvtss_f32(s);
    }
};

}  // namespace

void matmul_rows_avx512(const float* x, int64_t m, int64_t x_stride, const float* weight, int64_t in,
                        const float* bias, float* y, int64_t y_stride, int64_t out_begin, int64_t out_end) {
    matmul_rows<Avx512>(x, m, x_stride, weight, in, bias, y, y_stride, out_begin, out_end);
}

}  // namespace cadenza::llama
