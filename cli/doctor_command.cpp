#include "doctor_command.h"

#include <filesystem>
#include <iostream>
#include <thread>

#include "cadenza/cadenza.h"
#include "cadenza/plugin.h"
#include "exit_codes.h"
#include "plugin_catalog.h"
#include "torch_report.h"

namespace cadenza::cli {

int run_doctor() {
    const TorchReport torch = torch_report();
    std::cout << "cadenza        " << CADENZA_VERSION << " (embedding ABI " << CDZ_ABI_VERSION_MAJOR << "."
              << CDZ_ABI_VERSION_MINOR << ", plugin ABI " << CDZ_PLUGIN_ABI_MAJOR << "." << CDZ_PLUGIN_ABI_MINOR << ")\n";
    std::cout << "LibTorch       " << torch.torch_version << '\n';
    std::cout << "BLAS           " << (torch.blas_library.empty() ? "(none found)" : torch.blas_library)
              << (torch.blas_is_reference ? "  [reference BLAS]" : "") << '\n';
    if (!torch.blas_config.empty()) std::cout << "BLAS config    " << torch.blas_config << '\n';
    std::cout << "threads        intra-op " << torch.intra_op_threads << ", inter-op " << torch.inter_op_threads
              << ", OpenBLAS " << (torch.openblas_threads < 0 ? std::string("n/a") : std::to_string(torch.openblas_threads))
              << ", OMP_WAIT_POLICY " << (torch.omp_wait_policy.empty() ? "(unset)" : torch.omp_wait_policy) << '\n';
    std::cout << "hardware       " << std::thread::hardware_concurrency() << " cores\n";
    std::cout << "CUDA           " << (torch.cuda_available ? "available, " + std::to_string(torch.cuda_devices) + " device(s)"
                                                            : std::string("not available (cpu only)"))
              << '\n';
    std::cout << "plugin path\n";
    for (const auto& location : plugin_search_path()) {
        std::error_code error;
        const bool exists = std::filesystem::exists(location.path, error);
        std::cout << "  " << location.path.string() << "  (" << location.origin << (exists ? "" : ", missing") << ")\n";
    }
    for (const auto& warning : torch.warnings) std::cout << "warning: " << warning << '\n';
    return exit_ok;
}

Command add_doctor_command(CLI::App& app) {
    auto* doctor = app.add_subcommand("doctor", "LibTorch, BLAS, threads, CUDA and the plugin search path");
    return {doctor, run_doctor};
}

}  // namespace cadenza::cli
