// What LibTorch this process runs on: version, BLAS, threads, CUDA, for
// `cadenza-torch torch-report` (the LibTorch half of `cadenza doctor`).
#pragma once

#include <string>
#include <vector>

namespace cadenza {

struct TorchReport {
    std::string torch_version;
    std::string blas_library;     // resolved path of the libblas.so.3 in use
    std::string blas_config;      // openblas_get_config(), when OpenBLAS
    bool blas_is_reference = false;
    int openblas_threads = -1;    // -1: not OpenBLAS
    int intra_op_threads = 0;
    int inter_op_threads = 0;
    std::string omp_wait_policy;  // $OMP_WAIT_POLICY, or "" when unset
    bool cuda_available = false;
    int cuda_devices = 0;
    std::vector<std::string> warnings;
};

TorchReport torch_report();

}  // namespace cadenza
