#include <immintrin.h>

#include "half_panels.h"
#include "half_panels_kernel.h"

namespace cadenza::drafts {
namespace {

// 16 outputs in two 8-lane registers.
struct Avx2 {
    struct acc {
        __m256 low, high;
    };
    static acc zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
    static acc load(const uint16_t* h) {
        return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))),
                _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 8)))};
    }
    static acc broadcast(float v) { return {_mm256_set1_ps(v), _mm256_set1_ps(v)}; }
    static acc fma(acc w, acc x, acc a) {
        return {_mm256_fmadd_ps(w.low, x.low, a.low), _mm256_fmadd_ps(w.high, x.high, a.high)};
    }
    static void store(acc a, float* out) {
        _mm256_storeu_ps(out, a.low);
        _mm256_storeu_ps(out + 8, a.high);
    }
};

}  // namespace

void half_panels_avx2(const uint16_t* halves, int64_t cols, int64_t rows, const float* x, const float* bias,
                      float* y) {
    half_panels<Avx2>(halves, cols, rows, x, bias, y);
}

}  // namespace cadenza::drafts
