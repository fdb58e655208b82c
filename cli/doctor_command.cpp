#include "doctor_command.h"

#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "cadenza/cadenza.h"
#include "cadenza/plugin.h"
#include "exit_codes.h"
#include "plugin_catalog.h"
#include "torch_commands.h"

extern char** environ;

namespace cadenza::cli {
namespace {

// cadenza-torch's part of the report, printed by it in place; false when
// there is no cadenza-torch or it failed.
bool print_torch_report() {
    const auto program = torch_commands_program();
    std::error_code error;
    if (program.empty() || !std::filesystem::exists(program, error)) return false;
    std::string command = "torch-report";
    char* argv[] = {const_cast<char*>(program.c_str()), command.data(), nullptr};
    std::cout.flush();
    pid_t child = 0;
    if (::posix_spawn(&child, program.c_str(), nullptr, nullptr, argv, environ) != 0) return false;
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int run_doctor() {
    std::cout << "cadenza        " << CADENZA_VERSION << " (embedding ABI " << CDZ_ABI_VERSION_MAJOR << "."
              << CDZ_ABI_VERSION_MINOR << ", plugin ABI " << CDZ_PLUGIN_ABI_MAJOR << "." << CDZ_PLUGIN_ABI_MINOR << ")\n";
    const bool torch = print_torch_report();
    if (!torch)
        std::cout << "LibTorch       none: " << torch_commands_program().string()
                  << " is missing or failed (a build with -DCADENZA_WITH_TORCH=OFF has no model plugins)\n";
    std::cout << "hardware       " << std::thread::hardware_concurrency() << " cores\n";
    std::cout << "plugin path\n";
    for (const auto& location : plugin_search_path()) {
        std::error_code error;
        const bool exists = std::filesystem::exists(location.path, error);
        std::cout << "  " << location.path.string() << "  (" << location.origin << (exists ? "" : ", missing") << ")\n";
    }
    return exit_ok;
}

}  // namespace

Command add_doctor_command(CLI::App& app) {
    auto* doctor = app.add_subcommand("doctor", "LibTorch, BLAS, threads, CUDA and the plugin search path");
    return {doctor, run_doctor};
}

}  // namespace cadenza::cli
