#include "torch_report_command.h"

#include <iostream>
#include <string>

#include "exit_codes.h"
#include "torch_commands.h"
#include "torch_report.h"

namespace cadenza::cli {
namespace {

int run_torch_report() {
    const TorchReport torch = torch_report();
    std::cout << "LibTorch       " << torch.torch_version << '\n';
    std::cout << "BLAS           " << (torch.blas_library.empty() ? "(none found)" : torch.blas_library)
              << (torch.blas_is_reference ? "  [reference BLAS]" : "") << '\n';
    if (!torch.blas_config.empty()) std::cout << "BLAS config    " << torch.blas_config << '\n';
    std::cout << "threads        intra-op " << torch.intra_op_threads << ", inter-op " << torch.inter_op_threads
              << ", OpenBLAS " << (torch.openblas_threads < 0 ? std::string("n/a") : std::to_string(torch.openblas_threads))
              << ", OMP_WAIT_POLICY " << (torch.omp_wait_policy.empty() ? "(unset)" : torch.omp_wait_policy) << '\n';
    std::cout << "CUDA           " << (torch.cuda_available ? "available, " + std::to_string(torch.cuda_devices) + " device(s)"
                                                            : std::string("not available (cpu only)"))
              << '\n';
    for (const auto& warning : torch.warnings) std::cout << "warning: " << warning << '\n';
    return exit_ok;
}

}  // namespace

Command add_torch_report_command(CLI::App& app) {
    return {app.add_subcommand("torch-report", torch_command_description("torch-report")), run_torch_report};
}

}  // namespace cadenza::cli
