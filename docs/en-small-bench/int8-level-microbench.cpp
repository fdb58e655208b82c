// Kept with en-small.md's thirtieth part (not built; g++ -O3 -march=native
// int8-level-microbench.cpp && ./a.out LEVELS KV_BYTES): what a one-row pass
// of en-small's projections costs with int8 panels (AVX-512 VNNI) against
// float32 panels, with the float32 target's 27.3 MB swept between draft
// levels as in the loop, and the draft's KV cache read at KV_BYTES an entry.
#include <immintrin.h>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <sys/mman.h>
template <class T> struct HugeAlloc { using value_type = T; HugeAlloc() = default; template <class U> HugeAlloc(const HugeAlloc<U>&) {}
 T* allocate(size_t n) { size_t b = (n * sizeof(T) + (2u<<20) - 1) & ~((size_t(2)<<20) - 1); void* p = aligned_alloc(2u<<20, b); madvise(p, b, MADV_HUGEPAGE); return (T*)p; }
 void deallocate(T* p, size_t) { free(p); } };
template <class T, class U> bool operator==(const HugeAlloc<T>&, const HugeAlloc<U>&) { return true; }
template <class T, class U> bool operator!=(const HugeAlloc<T>&, const HugeAlloc<U>&) { return false; }

struct Shape { int out, in; };
static std::vector<Shape> shapes() {
    std::vector<Shape> s;
    for (int l = 0; l < 6; ++l) {
        s.push_back({256, 256}); s.push_back({128, 256}); s.push_back({128, 256}); s.push_back({256, 256});
        s.push_back({768, 256}); s.push_back({768, 256}); s.push_back({256, 768});
    }
    s.push_back({8256, 256});  // the tied head, rounded up to 16 rows
    return s;
}

#ifndef PF
#define PF 1024
#endif
// int8 panel: 16 outputs x 4 inputs per 64 bytes.
static void matvec_int8(const int8_t* w, const uint8_t* x, int out, int in, int32_t* y) {
    for (int o = 0; o < out; o += 16) {
        __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
        const int8_t* p = w + (size_t)o * in;
        int k = 0;
        for (; k + 8 <= in; k += 8) {
            __m512i a0 = _mm512_set1_epi32(*(const int32_t*)(x + k));
            __m512i a1 = _mm512_set1_epi32(*(const int32_t*)(x + k + 4));
            _mm_prefetch((const char*)(p + (size_t)k * 16 + PF), _MM_HINT_T0); _mm_prefetch((const char*)(p + (size_t)k * 16 + PF + 64), _MM_HINT_T0);
            acc0 = _mm512_dpbusd_epi32(acc0, a0, _mm512_loadu_si512(p + (size_t)k * 16));
            acc1 = _mm512_dpbusd_epi32(acc1, a1, _mm512_loadu_si512(p + (size_t)k * 16 + 64));
        }
        _mm512_storeu_si512(y + o, _mm512_add_epi32(acc0, acc1));
    }
}

// float32 panel: 16 outputs x 1 input per 64 bytes.
static void matvec_f32(const float* w, const float* x, int out, int in, float* y) {
    for (int o = 0; o < out; o += 16) {
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps(), acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
        const float* p = w + (size_t)o * in;
        for (int k = 0; k < in; k += 4) {
            acc0 = _mm512_fmadd_ps(_mm512_set1_ps(x[k]), _mm512_loadu_ps(p + (size_t)k * 16), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 1]), _mm512_loadu_ps(p + (size_t)(k + 1) * 16), acc1);
            acc2 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 2]), _mm512_loadu_ps(p + (size_t)(k + 2) * 16), acc2);
            acc3 = _mm512_fmadd_ps(_mm512_set1_ps(x[k + 3]), _mm512_loadu_ps(p + (size_t)(k + 3) * 16), acc3);
        }
        _mm512_storeu_ps(y + o, _mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
    }
}

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(int argc, char** argv) {
    const int levels = argc > 1 ? atoi(argv[1]) : 4;
    const int kv_bytes = argc > 2 ? atoi(argv[2]) : 4;  // bytes per cached key/value entry the draft reads
    auto s = shapes();
    size_t n = 0;
    for (auto& m : s) n += (size_t)m.out * m.in;
    std::vector<float, HugeAlloc<float>> wf(n);
    std::vector<int8_t, HugeAlloc<int8_t>> wq(n);
    for (size_t i = 0; i < n; ++i) { wf[i] = (rand() % 2001 - 1000) * 1e-4f; wq[i] = (int8_t)(rand() % 255 - 127); }
    // the draft's attention reads 6 layers x K,V x 128 x 320 positions
    const size_t kv = 6 * 2 * 128 * 320 * (size_t)kv_bytes;
    std::vector<uint8_t> cache(kv, 1);
    std::vector<float> xf(768, 0.01f), yf(8256);
    std::vector<uint8_t> xq(768, 3);
    std::vector<int32_t> yq(8256);
    std::vector<double> t_target, t_level;
    volatile float sink = 0;
    for (int rep = 0; rep < 400; ++rep) {
        double t0 = now();
        size_t off = 0;
        for (auto& m : s) { matvec_f32(wf.data() + off, xf.data(), m.out, m.in, yf.data()); off += (size_t)m.out * m.in; }
        sink = sink + yf[5];
        double t1 = now();
        t_target.push_back(t1 - t0);
        for (int l = 0; l < levels; ++l) {
            double a = now();
            off = 0;
            for (auto& m : s) { matvec_int8(wq.data() + off, xq.data(), m.out, m.in, yq.data()); off += (size_t)m.out * m.in; }
            uint64_t acc = 0;
            const uint64_t* c = (const uint64_t*)cache.data();
            for (size_t i = 0; i < kv / 8; i += 8) acc += c[i];  // one read per 64-byte line
            sink = sink + yq[7] + (float)(acc & 1);
            t_level.push_back(now() - a);
        }
    }
    std::sort(t_target.begin(), t_target.end());
    std::sort(t_level.begin(), t_level.end());
    double tt = t_target[t_target.size() / 2], tl = t_level[t_level.size() / 2];
    printf("weights: float32 %.1f MB, int8 %.1f MB; draft KV read %.2f MB\n", n * 4 / 1e6, n / 1e6, kv / 1e6);
    printf("float32 one-row projections: %.3f ms (%.1f GB/s)\n", tt * 1e3, n * 4 / tt / 1e9);
    printf("int8 level (projections + KV read), %d levels after each float32 pass: %.3f ms = %.3f of the float32 pass\n", levels, tl * 1e3, tl / tt);
    return 0;
}
