#include "half_panels.h"

#include <cmath>
#include <cstring>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::drafts {
namespace {

// Round to nearest, ties to even; beyond the largest half (65504) to
// infinity from 65520 on, as IEEE conversion does.
uint16_t half_of(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) return sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u);
    if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
    if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero), in units of 2^-24
        float scaled;
        std::memcpy(&scaled, &magnitude, sizeof scaled);
        return sign | static_cast<uint16_t>(std::nearbyint(scaled * 16777216.0f));
    }
    uint32_t half = (((magnitude >> 23) - 112u) << 10) | ((magnitude & 0x7fffffu) >> 13);
    const uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry into the exponent is right
    return sign | static_cast<uint16_t>(half);
}

float float_of(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu, mantissa = half & 0x3ffu;
    float value;
    if (exponent == 0) {
        value = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -value : value;
    }
    const uint32_t bits = sign | (exponent == 31 ? 0x7f800000u | (mantissa << 13) : ((exponent + 112u) << 23) | (mantissa << 13));
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

enum class Path { plain, avx2, avx512 };

Path best_path() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return Path::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return Path::avx2;
#endif
    return Path::plain;
}

}  // namespace

HalfPanels::HalfPanels(const float* weight, int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {
    if (rows < 1 || cols < 1) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "HalfPanels: an empty matrix");
    const int64_t panels = (rows + panel_rows - 1) / panel_rows;
    halves_.assign(static_cast<size_t>(panels * cols * panel_rows), 0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) halves_[index(r, c)] = half_of(weight[r * cols + c]);
}

float HalfPanels::at(int64_t r, int64_t c) const { return float_of(halves_[index(r, c)]); }

void HalfPanels::multiply_plain(const float* x, const float* bias, float* y) const {
    for (int64_t r = 0; r < rows_; ++r) {
        float sum = 0.0f;
        for (int64_t c = 0; c < cols_; ++c) sum = std::fma(at(r, c), x[c], sum);
        y[r] = bias ? sum + bias[r] : sum;
    }
}

void HalfPanels::multiply(const float* x, const float* bias, float* y) const {
    static const Path path = best_path();
    switch (path) {
        case Path::avx512: half_panels_avx512(halves_.data(), cols_, rows_, x, bias, y); return;
        case Path::avx2: half_panels_avx2(halves_.data(), cols_, rows_, x, bias, y); return;
        default: multiply_plain(x, bias, y);
    }
}

}  // namespace cadenza::drafts
