// The int8 panels' kernels (int8_panels.h) for AVX2, for CPUs without
// AVX-512 VNNI, compiled for AVX2 and dispatched at run time. The same bits
// as the VNNI kernel: the same rounded rows, the same exact int32 sums, the
// same last step to floats.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "int8_panels.h"
#include "row_blocks.h"

namespace cadenza::llama {
namespace {

// A block of R rows sums P pieces of 8 outputs of a panel at a time, 8
// sums in registers: one row the panel's 64 outputs, two rows 32, three or
// four rows 16.
template <int R>
constexpr int pieces_for_rows() {
    return R == 1 ? 8 : R == 2 ? 4 : 2;
}

inline __m256i lanes_below(int64_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Outputs [8 first_piece, 8 (first_piece + P)) of one panel (`groups` groups
// of 4 inputs, 256 bytes each) against R rows. A row's 4 bytes of a group,
// value + 128, become the signed value s; vpmaddubsw multiplies |s| by each
// weight carrying s's sign and adds pairs (at most 2 x 127 x 127 in int16: no
// saturation), vpmaddwd adds the pairs into each output's int32 sum: the
// products summed exactly, as vpdpbusd sums them.
template <int R, int P>
void combine_int8_pieces(const QuantizedRows& x, int64_t first_row, const int8_t* panel, int64_t groups,
                         int first_piece, const float* w_scales, int64_t width, float* y, int64_t y_stride) {
    __m256i acc[R][P];
    for (int r = 0; r < R; ++r)
        for (int p = 0; p < P; ++p) acc[r][p] = _mm256_setzero_si256();
    const uint8_t* rows[R];
    for (int r = 0; r < R; ++r) rows[r] = x.values + (first_row + r) * x.stride;
    const __m256i offset = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t g = 0; g < groups; ++g) {
        // The first pieces' sweep prefetches each group's whole 256 bytes:
        // the later sweeps find them in L2.
        if (first_piece == 0)
            for (int line = 0; line < 4; ++line)
                _mm_prefetch(reinterpret_cast<const char*>(panel + g * 256 + 2048 + 64 * line), _MM_HINT_T0);
        const int8_t* p = panel + g * 256 + 32 * first_piece;
        for (int r = 0; r < R; ++r) {
            int32_t four;
            std::memcpy(&four, rows[r] + 4 * g, sizeof(four));
            const __m256i signed_values = _mm256_xor_si256(_mm256_set1_epi32(four), offset);
            const __m256i magnitudes = _mm256_abs_epi8(signed_values);
            for (int q = 0; q < P; ++q) {
                const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * q));
                const __m256i pairs = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(w, signed_values));
                acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(pairs, ones));
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        const __m256 row_scale = _mm256_set1_ps(x.scales[first_row + r]);
        for (int q = 0; q < P; ++q) {
            const int64_t first = 8 * (first_piece + q), left = width - first;
            if (left <= 0) break;
            const __m256i lanes = lanes_below(left < 8 ? left : 8);
            const __m256 scales = _mm256_mul_ps(_mm256_maskload_ps(w_scales + first, lanes), row_scale);
            _mm256_maskstore_ps(y + (first_row + r) * y_stride + first, lanes,
                                _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][q]), scales));
        }
    }
}

}  // namespace

void quantize_rows_avx2(const float* x, int64_t m, int64_t x_stride, int64_t in, QuantizedRows& out) {
    const int64_t padded = (in + 3) / 4 * 4;
    const __m256 magnitude_bits = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t i = 0; i < m; ++i) {
        const float* row = x + i * x_stride;
        __m256 peak = _mm256_setzero_ps();
        int64_t k = 0;
        for (; k + 8 <= in; k += 8) peak = _mm256_max_ps(peak, _mm256_and_ps(_mm256_loadu_ps(row + k), magnitude_bits));
        float lanes[8];
        _mm256_storeu_ps(lanes, peak);
        float amax = 0.0f;
        for (float lane : lanes) amax = lane > amax ? lane : amax;
        for (; k < in; ++k) amax = row[k] > amax ? row[k] : (-row[k] > amax ? -row[k] : amax);
        const float step = amax > 0.0f ? amax / 127.0f : 1.0f;
        out.scales[i] = step;
        const __m256 inverse = _mm256_set1_ps(1.0f / step);
        uint8_t* q = out.values + i * out.stride;
        for (k = 0; k + 8 <= in; k += 8) {
            const __m256i whole = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(row + k), inverse));
            const __m256i clamped = _mm256_min_epi32(_mm256_max_epi32(whole, _mm256_set1_epi32(-127)),
                                                     _mm256_set1_epi32(127));
            int32_t values[8];
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(values), _mm256_add_epi32(clamped, _mm256_set1_epi32(128)));
            for (int j = 0; j < 8; ++j) q[k + j] = static_cast<uint8_t>(values[j]);
        }
        for (; k < in; ++k) {
            int32_t whole = static_cast<int32_t>(__builtin_nearbyintf(row[k] * (1.0f / step)));
            whole = whole < -127 ? -127 : (whole > 127 ? 127 : whole);
            q[k] = static_cast<uint8_t>(whole + 128);
        }
        for (; k < padded; ++k) q[k] = 128;  // zero: the padded weights are zero too
    }
}

void combine_int8_panels_avx2(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                              int64_t in, int64_t out, float* y, int64_t y_stride) {
    const int64_t groups = (in + 3) / 4;
    for (int64_t first = 0; first < out; first += 64) {
        const int8_t* panel = panels + (first / 64) * groups * 256;
        const int64_t width = out - first < 64 ? out - first : 64;
        in_blocks_of<4>(m, [&](auto rows, int64_t r) {
            constexpr int R = decltype(rows)::value, P = pieces_for_rows<R>();
            for (int piece = 0; piece < 8 && 8 * piece < width; piece += P)
                combine_int8_pieces<R, P>(x, r, panel, groups, piece, w_scales + first, width, y + first, y_stride);
        });
    }
}

}  // namespace cadenza::llama
