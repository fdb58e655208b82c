// Part 55: can a cyclic sweep over more than this VM's share of the L3 keep
// its head there by keeping its tail out? One core sweeps an N MB buffer
// again and again; the first KEEP MB with plain loads, the rest either with
// a prefetchnta 1 KB ahead (mode nta) or flushed by clflushopt right after
// being read (mode flush). Prints ms per sweep for KEEP = all, 0, 4, ..., 16.
//   gcc -O2 -mavx2 -mclflushopt -o l3-tail-sweeps l3-tail-sweeps.c
//   ./l3-tail-sweeps 27.3 nta; ./l3-tail-sweeps 27.3 flush; ./l3-tail-sweeps 8 nta
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// Each 128-byte step: four loads summed into an array of accumulators.
static float sweep(const float* a, size_t n, size_t tail_from, int flush) {
    __m256 sums[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (size_t i = 0; i < n; i += 32) {
        if (i >= tail_from && !flush) _mm_prefetch((const char*)(a + i) + 1024, _MM_HINT_NTA);
        if (i >= tail_from && flush && i >= 64) {
            _mm_clflushopt((void*)(a + i - 64));
            _mm_clflushopt((void*)(a + i - 48));
        }
        for (int k = 0; k < 4; k++) sums[k] = _mm256_add_ps(sums[k], _mm256_load_ps(a + i + 8 * k));
    }
    float o[8];
    _mm256_storeu_ps(o, _mm256_add_ps(_mm256_add_ps(sums[0], sums[1]), _mm256_add_ps(sums[2], sums[3])));
    return o[0] + o[7];
}

int main(int argc, char** argv) {
    if (argc < 3) return fprintf(stderr, "usage: %s MB nta|flush\n", argv[0]), 2;
    const double mb = atof(argv[1]);
    const int flush = strcmp(argv[2], "flush") == 0;
    const size_t n = (size_t)(mb * 1048576 / 4) / 32 * 32;
    float* a = aligned_alloc(64, n * 4);
    for (size_t i = 0; i < n; i++) a[i] = 1e-6f * (i % 1000);
    const double keeps[] = {-1, 0, 4, 8, 12, 16};
    float sink = 0;
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < 6; k++) {
            const size_t from = keeps[k] < 0 ? n : (size_t)(keeps[k] * 1048576 / 4);
            for (int r = 0; r < 65; r++) {  // 5 untimed, then 60 timed
                static double start;
                if (r == 5) start = now();
                a[r] += 1.0f;
                __asm__ volatile("" ::: "memory");
                sink += sweep(a, n, from, flush);
                if (r == 64) {
                    const double t = (now() - start) / 60;
                    printf("round %d keep %s%4.0f MB: %.3f ms %.1f GB/s\n", round, keeps[k] < 0 ? "all " : "",
                           keeps[k] < 0 ? mb : keeps[k], t * 1e3, n * 4 / t / 1e9);
                }
            }
        }
    return sink == 12345;
}
