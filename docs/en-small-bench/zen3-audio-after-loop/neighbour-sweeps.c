// What work on the VM's other core costs a memory sweep on this one (issue
// 21, fifty-fourth part). Core 0 sweeps (reads) a buffer of MAIN_MB again and
// again; core 1 meanwhile does nothing, or sweeps a buffer of its own of 1,
// 4, 8 or 16 MB, or runs multiply-adds in registers. Prints ms per sweep of
// core 0 (minimum and mean of 40) and GB/s.
//   cc -O2 -mavx2 -mfma -pthread neighbour-sweeps.c -o neighbour-sweeps && ./neighbour-sweeps MAIN_MB
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static void pin(int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
static float sweep(const float* p, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i < n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
    }
    float out[8];
    _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    return out[0];
}

static volatile int stop;
static int neighbour_mb;  // > 0: sweep that many MB; -1: multiply-adds in registers
static float* neighbour_buffer;

static void* neighbour(void* unused) {
    (void)unused;
    pin(1);
    volatile float sink = 0;
    if (neighbour_mb > 0) {
        while (!stop) sink += sweep(neighbour_buffer, (size_t)neighbour_mb << 18);
    } else {
        __m256 a[8], m = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-7f);
        for (int i = 0; i < 8; ++i) a[i] = _mm256_set1_ps(1.0f);
        while (!stop)
            for (int r = 0; r < 1000; ++r)
                for (int i = 0; i < 8; ++i) a[i] = _mm256_fmadd_ps(a[i], m, b);
        float out[8];
        _mm256_storeu_ps(out, a[1]);
        sink += out[0];
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 2 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: neighbour-sweeps MAIN_MB\n");
        return 1;
    }
    pin(0);
    const size_t main_mb = (size_t)atoi(argv[1]), n = main_mb << 18;
    float* buffer = aligned_alloc(64, n * 4);
    memset(buffer, 1, n * 4);
    neighbour_buffer = aligned_alloc(64, (size_t)16 << 20);
    memset(neighbour_buffer, 1, (size_t)16 << 20);
    const int loads[] = {0, 1, 4, 8, 16, -1};
    for (int round = 0; round < 2; ++round)
        for (int k = 0; k < 6; ++k) {
            neighbour_mb = loads[k];
            stop = 0;
            pthread_t thread;
            if (neighbour_mb) pthread_create(&thread, NULL, neighbour, NULL);
            volatile float sink = 0;
            for (int w = 0; w < 3; ++w) sink += sweep(buffer, n);
            double best = 1e9, total = 0;
            for (int r = 0; r < 40; ++r) {
                const double t = now();
                sink += sweep(buffer, n);
                const double s = now() - t;
                total += s;
                best = s < best ? s : best;
            }
            stop = 1;
            if (neighbour_mb) pthread_join(thread, NULL);
            char what[32];
            if (neighbour_mb > 0) snprintf(what, sizeof what, "sweeping %d MB", neighbour_mb);
            else snprintf(what, sizeof what, neighbour_mb ? "multiply-adds" : "idle");
            printf("core 0 sweeping %zu MB, core 1 %-15s: min %.3f ms, mean %.3f ms (%.1f GB/s)\n", main_mb, what,
                   best * 1e3, total / 40 * 1e3, main_mb / 1024.0 / (total / 40));
        }
    return 0;
}
