#include "lane_real_fft.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace cadenza::mel_fsq {
namespace {

constexpr int64_t L = LaneRealFft::kLanes;

// In-place complex FFT of `half` slots [half][L] in bit-reversed order, each
// lane its own transform. One clone per instruction set, chosen when the
// library loads.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void transform_lanes(float* real, float* imag, int64_t half, const float* twiddle_real, const float* twiddle_imag) {
    auto butterflies = [&](int64_t begin, int64_t end, int64_t span) {
        const int64_t step = half / (2 * span);  // twiddle index per butterfly
        for (int64_t start = begin; start < end; start += 2 * span)
            for (int64_t j = 0; j < span; ++j) {
                const float wr = twiddle_real[j * step], wi = twiddle_imag[j * step];
                float* __restrict ar = real + (start + j) * L;
                float* __restrict ai = imag + (start + j) * L;
                float* __restrict br = real + (start + j + span) * L;
                float* __restrict bi = imag + (start + j + span) * L;
#pragma GCC ivdep  // the four rows are distinct
                for (int64_t l = 0; l < L; ++l) {
                    const float tr = wr * br[l] - wi * bi[l];
                    const float ti = wr * bi[l] + wi * br[l];
                    br[l] = ar[l] - tr;
                    bi[l] = ai[l] - ti;
                    ar[l] += tr;
                    ai[l] += ti;
                }
            }
    };
    // Two stages in one sweep (spans s and 2s: four rows per butterfly
    // group), so the slots pass through the cache half as often.
    auto two_stages = [&](int64_t begin, int64_t end, int64_t span) {
        const int64_t step = half / (4 * span);  // twiddle index per butterfly of the second stage
        for (int64_t start = begin; start < end; start += 4 * span)
            for (int64_t j = 0; j < span; ++j) {
                const float w1r = twiddle_real[2 * j * step], w1i = twiddle_imag[2 * j * step];
                const float w2r = twiddle_real[j * step], w2i = twiddle_imag[j * step];
                const float w3r = twiddle_real[(j + span) * step], w3i = twiddle_imag[(j + span) * step];
                float* __restrict r0 = real + (start + j) * L;
                float* __restrict i0 = imag + (start + j) * L;
                float* __restrict r1 = real + (start + j + span) * L;
                float* __restrict i1 = imag + (start + j + span) * L;
                float* __restrict r2 = real + (start + j + 2 * span) * L;
                float* __restrict i2 = imag + (start + j + 2 * span) * L;
                float* __restrict r3 = real + (start + j + 3 * span) * L;
                float* __restrict i3 = imag + (start + j + 3 * span) * L;
#pragma GCC ivdep  // the eight rows are distinct
                for (int64_t l = 0; l < L; ++l) {
                    // first stage: (0, 1) and (2, 3) with twiddle w1
                    const float t1r = w1r * r1[l] - w1i * i1[l], t1i = w1r * i1[l] + w1i * r1[l];
                    const float t3r = w1r * r3[l] - w1i * i3[l], t3i = w1r * i3[l] + w1i * r3[l];
                    const float a0r = r0[l] + t1r, a0i = i0[l] + t1i, a1r = r0[l] - t1r, a1i = i0[l] - t1i;
                    const float a2r = r2[l] + t3r, a2i = i2[l] + t3i, a3r = r2[l] - t3r, a3i = i2[l] - t3i;
                    // second stage: (0, 2) with w2, (1, 3) with w3
                    const float u2r = w2r * a2r - w2i * a2i, u2i = w2r * a2i + w2i * a2r;
                    const float u3r = w3r * a3r - w3i * a3i, u3i = w3r * a3i + w3i * a3r;
                    r0[l] = a0r + u2r;
                    i0[l] = a0i + u2i;
                    r2[l] = a0r - u2r;
                    i2[l] = a0i - u2i;
                    r1[l] = a1r + u3r;
                    i1[l] = a1i + u3i;
                    r3[l] = a1r - u3r;
                    i3[l] = a1i - u3i;
                }
            }
    };
    auto stages = [&](int64_t begin, int64_t end, int64_t first_span, int64_t last_span) {
        int64_t span = first_span;
        for (; 2 * span <= last_span; span *= 4) two_stages(begin, end, span);
        if (span <= last_span) butterflies(begin, end, span);
    };
    // Spans below `chunk` stay within aligned chunks of `chunk` slots (16 KB):
    // all of them run on one chunk while it is in the L1 cache.
    const int64_t chunk = std::min<int64_t>(half, 128);
    for (int64_t begin = 0; begin < half; begin += chunk) stages(begin, begin + chunk, 1, chunk / 2);
    if (chunk < half) stages(0, half, chunk, half / 2);
}

// The real signal's spectrum X[1 .. half - 1] from the half-size transform Z:
// X[k] = E[k] + exp(-2 pi i k / size) O[k], E[k] = (Z[k] + conj Z[half - k]) / 2,
// O[k] = (Z[k] - conj Z[half - k]) / 2i.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void split_spectrum(const float* zr, const float* zi, int64_t half, const float* cosines, const float* sines,
                    float* __restrict out_real, float* __restrict out_imag) {
    for (int64_t k = 1; k < half; ++k) {
        const float* ar = zr + k * L;
        const float* ai = zi + k * L;
        const float* br = zr + (half - k) * L;
        const float* bi = zi + (half - k) * L;
        const float c = cosines[k], s = sines[k];
        float* xr = out_real + k * L;
        float* xi = out_imag + k * L;
#pragma GCC ivdep
        for (int64_t l = 0; l < L; ++l) {
            // B = conj Z[half - k]
            const float even_r = 0.5f * (ar[l] + br[l]), even_i = 0.5f * (ai[l] - bi[l]);
            const float odd_r = 0.5f * (ai[l] + bi[l]), odd_i = -0.5f * (ar[l] - br[l]);
            xr[l] = even_r + c * odd_r + s * odd_i;
            xi[l] = even_i + c * odd_i - s * odd_r;
        }
    }
}

// The inverse of split_spectrum: Z[k] = E[k] + i O[k] with E[k] = (X[k] +
// conj X[half - k]) / 2, O[k] = (X[k] - conj X[half - k]) exp(2 pi i k / size) / 2,
// written swapped (real parts into `imag`) into bit-reversed slots, so that
// the forward transform computes the inverse.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void join_spectrum(const float* xr, const float* xi, int64_t half, const float* cosines, const float* sines,
                   const int32_t* reversed, float* __restrict real, float* __restrict imag) {
    for (int64_t k = 0; k < half; ++k) {
        const float* pr = xr + k * L;
        const float* pi = xi + k * L;
        const float* qr = xr + (half - k) * L;
        const float* qi = xi + (half - k) * L;
        // The first and last bins' imaginary parts do not enter (irfft's rule).
        const float keep = k == 0 ? 0.0f : 1.0f;
        const float c = cosines[k], s = sines[k];
        float* to_real = real + reversed[k] * L;
        float* to_imag = imag + reversed[k] * L;
#pragma GCC ivdep
        for (int64_t l = 0; l < L; ++l) {
            const float p_i = keep * pi[l], q_i = -keep * qi[l];  // Q = conj X[half - k]
            const float even_r = 0.5f * (pr[l] + qr[l]), even_i = 0.5f * (p_i + q_i);
            const float dr = pr[l] - qr[l], di = p_i - q_i;
            const float odd_r = 0.5f * (dr * c - di * s), odd_i = 0.5f * (dr * s + di * c);
            to_imag[l] = even_r - odd_i;  // Z's real part
            to_real[l] = even_i + odd_r;  // Z's imaginary part
        }
    }
}

}  // namespace

bool LaneRealFft::supports(int64_t size) { return size >= 4 && (size & (size - 1)) == 0; }

struct LaneRealFft::Tables {
    std::vector<int32_t> reversed;                 // bit reversal over half slots
    std::vector<float> twiddle_real, twiddle_imag;  // exp(-2 pi i k / half), k < half / 2
    std::vector<float> split_cos, split_sin;        // cos, sin(2 pi k / size), k <= half
};

std::shared_ptr<const LaneRealFft::Tables> LaneRealFft::tables_of(int64_t size) {
    static std::mutex mutex;
    static std::map<int64_t, std::shared_ptr<const Tables>> computed;
    const std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<const Tables>& found = computed[size];
    if (found) return found;
    const int64_t half = size / 2;
    auto tables = std::make_shared<Tables>();
    int bits = 0;
    while ((int64_t{1} << bits) < half) ++bits;
    tables->reversed.resize(static_cast<size_t>(half));
    for (int64_t m = 0; m < half; ++m) {
        int64_t r = 0;
        for (int b = 0; b < bits; ++b) r |= ((m >> b) & 1) << (bits - 1 - b);
        tables->reversed[static_cast<size_t>(m)] = static_cast<int32_t>(r);
    }
    for (int64_t k = 0; k < half / 2; ++k) {
        const double angle = 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(half);
        tables->twiddle_real.push_back(static_cast<float>(std::cos(angle)));
        tables->twiddle_imag.push_back(static_cast<float>(-std::sin(angle)));
    }
    for (int64_t k = 0; k <= half; ++k) {
        const double angle = 2.0 * M_PI * static_cast<double>(k) / static_cast<double>(size);
        tables->split_cos.push_back(static_cast<float>(std::cos(angle)));
        tables->split_sin.push_back(static_cast<float>(std::sin(angle)));
    }
    found = std::move(tables);
    return found;
}

LaneRealFft::LaneRealFft(int64_t size) : size_(size), half_(size / 2) {
    if (!supports(size))
        throw std::invalid_argument("lane FFT: size " + std::to_string(size) + " is not a power of two >= 4");
    tables_ = tables_of(size);
    real_.assign(static_cast<size_t>(half_ * kLanes), 0.0f);
    imag_.assign(static_cast<size_t>(half_ * kLanes), 0.0f);
}

// Each slot's kLanes floats are written together (a whole cache line for 16
// lanes): filling one lane at a time wrote 16 partial lines per slot and
// cost 2 us per 1024-point frame against 0.4 for the transform.
void LaneRealFft::load(const float* const* frames, int64_t count, const float* window) {
    for (int64_t m = 0; m < half_; ++m) {
        float* to_real = real_.data() + tables_->reversed[static_cast<size_t>(m)] * kLanes;
        float* to_imag = imag_.data() + tables_->reversed[static_cast<size_t>(m)] * kLanes;
        const float even = window ? window[2 * m] : 1.0f, odd = window ? window[2 * m + 1] : 1.0f;
        for (int64_t l = 0; l < count; ++l) {
            to_real[l] = frames[l][2 * m] * even;
            to_imag[l] = frames[l][2 * m + 1] * odd;
        }
        for (int64_t l = count; l < kLanes; ++l) to_real[l] = to_imag[l] = 0.0f;
    }
}

void LaneRealFft::forward(float* real, float* imag) {
    transform_lanes(real_.data(), imag_.data(), half_, tables_->twiddle_real.data(), tables_->twiddle_imag.data());
    const float* zr = real_.data();
    const float* zi = imag_.data();
    for (int64_t l = 0; l < kLanes; ++l) {  // X[0] and X[half]: the sum and difference of Z[0]'s parts
        real[l] = zr[l] + zi[l];
        imag[l] = 0.0f;
        real[half_ * kLanes + l] = zr[l] - zi[l];
        imag[half_ * kLanes + l] = 0.0f;
    }
    split_spectrum(zr, zi, half_, tables_->split_cos.data(), tables_->split_sin.data(), real, imag);
}

void LaneRealFft::inverse(const float* real, const float* imag) {
    join_spectrum(real, imag, half_, tables_->split_cos.data(), tables_->split_sin.data(), tables_->reversed.data(), real_.data(),
                  imag_.data());
    transform_lanes(real_.data(), imag_.data(), half_, tables_->twiddle_real.data(), tables_->twiddle_imag.data());
}

void LaneRealFft::accumulate(float* const* to, int64_t count, const float* window) const {
    const float scale = 1.0f / static_cast<float>(half_);
    for (int64_t m = 0; m < half_; ++m) {
        const float* even = imag_.data() + m * kLanes;  // the inverse's real parts (see join_spectrum)
        const float* odd = real_.data() + m * kLanes;
        const float even_scale = window ? scale * window[2 * m] : scale;
        const float odd_scale = window ? scale * window[2 * m + 1] : scale;
        for (int64_t l = 0; l < count; ++l) {
            to[l][2 * m] += even[l] * even_scale;
            to[l][2 * m + 1] += odd[l] * odd_scale;
        }
    }
}

}  // namespace cadenza::mel_fsq
