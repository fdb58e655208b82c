#include "torch_report.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

namespace cadenza {
namespace {

// The BLAS the dynamic linker picked: the mapped file named libblas.so.3.
std::string loaded_blas_library() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const auto slash = line.find('/');
        if (slash == std::string::npos) continue;
        const std::string path = line.substr(slash);
        if (path.find("libblas.so") != std::string::npos || path.find("libopenblas") != std::string::npos) {
            std::error_code error;
            const auto resolved = std::filesystem::canonical(path, error);
            return error ? path : resolved.string();
        }
    }
    return {};
}

}  // namespace

TorchReport torch_report() {
    TorchReport report;
    report.torch_version = TORCH_VERSION;
    at::init_num_threads();
    report.intra_op_threads = at::get_num_threads();
    report.inter_op_threads = at::get_num_interop_threads();
    report.cuda_available = at::hasCUDA();
    report.cuda_devices = report.cuda_available ? static_cast<int>(at::getNumGPUs()) : 0;
    if (const char* policy = std::getenv("OMP_WAIT_POLICY")) report.omp_wait_policy = policy;

    report.blas_library = loaded_blas_library();
    using config_fn = char* (*)();
    using threads_fn = int (*)();
    if (auto config = reinterpret_cast<config_fn>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
        report.blas_config = config();
    if (auto threads = reinterpret_cast<threads_fn>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")))
        report.openblas_threads = threads();
    report.blas_is_reference = report.blas_library.empty() ||
                               (report.blas_config.empty() && report.blas_library.find("openblas") == std::string::npos &&
                                report.blas_library.find("mkl") == std::string::npos &&
                                report.blas_library.find("blis") == std::string::npos);
    if (report.blas_is_reference)
        report.warnings.push_back("LibTorch runs on the reference BLAS (" +
                                  (report.blas_library.empty() ? std::string("none found") : report.blas_library) +
                                  "), about 30x slower: install libopenblas0-pthread (scripts/setup.sh does)");
    if (report.openblas_threads > 1 && report.intra_op_threads > 1 && report.omp_wait_policy != "PASSIVE")
        report.warnings.push_back("OpenBLAS (" + std::to_string(report.openblas_threads) + " threads) and OpenMP (" +
                                  std::to_string(report.intra_op_threads) +
                                  " threads) may oversubscribe the cores: hold OpenBLAS to one thread "
                                  "(OPENBLAS_NUM_THREADS=1) or set OMP_WAIT_POLICY=PASSIVE");
    return report;
}

}  // namespace cadenza
