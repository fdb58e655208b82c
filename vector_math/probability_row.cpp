#include "probability_row.h"

#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cadenza {
namespace {

// Every branch is a select and the rounding a magic-number add, so that the
// loop over it vectorizes (with -fno-trapping-math: core/CMakeLists.txt).
inline float exp_polynomial(float x) {
    constexpr float lowest = -87.0f;  // exp(-87) = 1.6e-38, the smallest normal float's order
    constexpr float log2e = 1.44269504088896341f;
    constexpr float ln2_high = 0.693359375f, ln2_low = -2.12194440e-4f;
    constexpr float round_to_integer = 12582912.0f;  // 1.5 * 2^23
    const bool underflows = x < lowest;
    x = underflows ? lowest : x;
    x = x > 88.0f ? 88.0f : x;
    const float n = (x * log2e + round_to_integer) - round_to_integer;
    float r = x - n * ln2_high;
    r = r - n * ln2_low;
    const float z = r * r;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * z + r + 1.0f;
    const float whole = n == n ? n : 0.0f;  // NaN stays in y; converting it is undefined
    const auto power = __builtin_bit_cast(float, (static_cast<int32_t>(whole) + 127) << 23);
    return underflows ? 0.0f : y * power;
}

}  // namespace

float row_max(const float* values, int64_t count) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t i = 0;
#if defined(__SSE2__)
    // max_ps(v, m) is m where v is NaN, as the scalar select below.
    __m128 m0 = _mm_set1_ps(best), m1 = m0;
    for (; i + 8 <= count; i += 8) {
        m0 = _mm_max_ps(_mm_loadu_ps(values + i), m0);
        m1 = _mm_max_ps(_mm_loadu_ps(values + i + 4), m1);
    }
    alignas(16) float lanes[4];
    _mm_store_ps(lanes, _mm_max_ps(m0, m1));
    for (float lane : lanes) best = lane > best ? lane : best;
#endif
    for (; i < count; ++i) best = values[i] > best ? values[i] : best;
    return best;
}

// One clone per instruction set, chosen when the library loads; no FMA
// (-ffp-contract=off), so every clone rounds alike and a seed draws the same
// tokens on any x86-64.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void exponentiate_row(const float* logits, float* out, int64_t count, float shift, float scale) {
    for (int64_t i = 0; i < count; ++i) out[i] = exp_polynomial((logits[i] - shift) * scale);
}

bool row_is_nonnegative_finite(const float* values, int64_t count) {
    // As unsigned bits, the non-negative finite floats are those below +inf's.
    constexpr uint32_t infinity_bits = 0x7f800000u, negative_zero_bits = 0x80000000u;
    uint32_t bad = 0;
    for (int64_t i = 0; i < count; ++i) {
        const auto bits = __builtin_bit_cast(uint32_t, values[i]);
        bad |= static_cast<uint32_t>(bits >= infinity_bits && bits != negative_zero_bits);
    }
    return bad == 0;
}

double row_sum(const float* values, int64_t count) {
    double total = 0.0;
    int64_t i = 0;
#if defined(__SSE2__)
    __m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    for (; i + 8 <= count; i += 8) {
        const __m128 low = _mm_loadu_ps(values + i), high = _mm_loadu_ps(values + i + 4);
        s0 = _mm_add_pd(s0, _mm_cvtps_pd(low));
        s1 = _mm_add_pd(s1, _mm_cvtps_pd(_mm_movehl_ps(low, low)));
        s2 = _mm_add_pd(s2, _mm_cvtps_pd(high));
        s3 = _mm_add_pd(s3, _mm_cvtps_pd(_mm_movehl_ps(high, high)));
    }
    alignas(16) double lanes[2];
    _mm_store_pd(lanes, _mm_add_pd(_mm_add_pd(s0, s1), _mm_add_pd(s2, s3)));
    total = lanes[0] + lanes[1];
#endif
    for (; i < count; ++i) total += values[i];
    return total;
}

}  // namespace cadenza
