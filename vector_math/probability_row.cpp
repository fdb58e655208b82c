#include "probability_row.h"

#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
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

// The clones below are chosen when the library loads: one per instruction
// set, each rounding alike (no FMA: -ffp-contract=off), so that a seed draws
// the same tokens on any x86-64.
#if defined(__x86_64__) && defined(__GNUC__)
#define CADENZA_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CADENZA_ROW_CLONES
#endif

namespace {

// max(v, m) is m where v is NaN, as the scalar select: a NaN is skipped.
float row_max_sse2(const float* values, int64_t count) {
    float best = -std::numeric_limits<float>::infinity();
    int64_t i = 0;
#if defined(__SSE2__)
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

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) float row_max_avx512(const float* values, int64_t count) {
    float best = -std::numeric_limits<float>::infinity();
    // max(v, m) on all 16 lanes; the masked form because GCC 12 warns that
    // _mm512_max_ps's own placeholder operand is uninitialized.
    constexpr __mmask16 all = 0xffff;
    __m512 m = _mm512_set1_ps(best);
    int64_t i = 0;
    for (; i + 16 <= count; i += 16) m = _mm512_maskz_max_ps(all, _mm512_loadu_ps(values + i), m);
    if (i < count) {  // the last partial block, its missing lanes -infinity
        const auto rest = static_cast<__mmask16>((1u << (count - i)) - 1u);
        m = _mm512_maskz_max_ps(all, _mm512_mask_loadu_ps(_mm512_set1_ps(best), rest, values + i), m);
    }
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, m);
    for (float lane : lanes) best = lane > best ? lane : best;
    return best;
}
#endif

}  // namespace

float row_max(const float* values, int64_t count) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx512 = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
    if (avx512) return row_max_avx512(values, count);
#endif
    return row_max_sse2(values, count);
}

CADENZA_ROW_CLONES
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

namespace {

// row_sum's eight partial sums, combined in the order its SSE2 registers
// once added them (every result since depends on it).
inline double combine_partial_sums(const double lanes[8]) {
    return ((lanes[0] + lanes[2]) + (lanes[4] + lanes[6])) + ((lanes[1] + lanes[3]) + (lanes[5] + lanes[7]));
}

}  // namespace

// Partial sum j takes the entries i % 8 == j of the whole blocks of eight,
// in order; after combine_partial_sums the last count % 8 entries are added
// in order. Every clone adds alike.
CADENZA_ROW_CLONES
double row_sum(const float* values, int64_t count) {
    double lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= count; i += 8)
        for (int j = 0; j < 8; ++j) lanes[j] += static_cast<double>(values[i + j]);
    double total = combine_partial_sums(lanes);
    for (; i < count; ++i) total += values[i];
    return total;
}

double sparse_row_sum(const int64_t* indices, const float* values, int64_t n, int64_t count) {
    const int64_t blocks_end = count / 8 * 8;
    double lanes[8] = {};
    int64_t k = 0;
    for (; k < n && indices[k] < blocks_end; ++k) lanes[indices[k] % 8] += static_cast<double>(values[k]);
    double total = combine_partial_sums(lanes);
    for (; k < n; ++k) total += values[k];
    return total;
}

}  // namespace cadenza
