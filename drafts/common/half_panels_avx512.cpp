#include <immintrin.h>

#include "half_panels.h"
#include "half_panels_kernel.h"

namespace cadenza::drafts {
namespace {

struct Avx512 {
    using acc = __m512;
    static acc zero() { return _mm512_setzero_ps(); }
    // Zero-masked with every lane kept: the unmasked intrinsic's
    // _mm512_undefined_ps trips GCC 12's -Wmaybe-uninitialized.
    static acc load(const uint16_t* h) {
        return _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(h)));
    }
    static acc broadcast(float v) { return _mm512_set1_ps(v); }
    static acc fma(acc w, acc x, acc a) { return _mm512_fmadd_ps(w, x, a); }
    static void store(acc a, float* out) { _mm512_storeu_ps(out, a); }
};

}  // namespace

void half_panels_avx512(const uint16_t* halves, int64_t cols, int64_t rows, const float* x, const float* bias,
                        float* y) {
    half_panels<Avx512>(halves, cols, rows, x, bias, y);
}

}  // namespace cadenza::drafts
