#include "thread_policy.h"

#include <dlfcn.h>

#include <thread>

#include <ATen/Parallel.h>

namespace cadenza::llama {

// Measured on the 150M benchmark model (models/configs/bench-llama-150m.json,
// 585 MB of float32 weights) on a 2-core Zen 5 VM, ms per forward of m
// tokens after a 64-token prefix, median of 3 interleaved rounds (the VM's
// memory bandwidth varies by +-15% from run to run):
//
//                                            before (sgemm, at::mv)   small-m kernel
//                                             m=1    m=4   m=16      m=1   m=4  m=16  m=64
//   (a) OpenBLAS 1 thread, intra-op 2        23.4   62.0   96.1     21.2  27.5  48.2   150
//   (b) defaults: intra-op 1, OpenBLAS 2     16.3   61.1   55.4     21.6  26.5  40.9   153
//   (c) (a) with OMP_WAIT_POLICY=PASSIVE     21.1   63.5  100.7     24.8  32.2  57.4   172
//       intra-op 2 and OpenBLAS 2            17.1    165    250     19.6  26.1  41.8   315
//
// With the kernel (a) and (b) tie (one core already draws the VM's ~30 GB/s;
// the kernel's second thread adds up to 20% when more bandwidth is free), so
// (a) stays: the kernels split rows over LibTorch's intra-op threads, and
// OpenBLAS, which then only multiplies the attention scores, is held to one
// thread because its pthreads and OpenMP's spinning workers together
// oversubscribe the cores (last row: m = 4 before, m = 64 now). A passive
// OpenMP wait costs a wake-up per projection, 15-20% per step; it can only
// be set in the environment anyway.
int apply_thread_policy(int threads) {
    using set_threads_fn = void (*)(int);
    // Through dlsym: the BLAS behind libblas.so.3 may not be OpenBLAS.
    if (auto set_openblas_threads = reinterpret_cast<set_threads_fn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        set_openblas_threads(1);
    const int wanted = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (at::get_num_threads() != wanted) at::set_num_threads(wanted);
    return at::get_num_threads();
}

}  // namespace cadenza::llama
