#include "thread_policy.h"

#include <dlfcn.h>

#include <thread>

#include <ATen/Parallel.h>

namespace cadenza::llama {

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
