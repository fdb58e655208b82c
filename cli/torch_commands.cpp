#include "torch_commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <system_error>

#include "exit_codes.h"

namespace cadenza::cli {

const std::vector<TorchCommand>& torch_commands() {
    static const std::vector<TorchCommand> commands{
        {"build-tree", "measure draft heads' top-k accuracy and build draft.medusa's sparse tree (MEDUSA's greedy)"},
        {"model", "create model checkpoints"},
        {"train", "train a target, a shallow draft, or MTP / MEDUSA draft heads"},
        {"codec", "encode, decode and round-trip audio through a pipeline's codec; the mel-FSQ codec's quality gate"},
        {"target", "TTS target tools: how close a target comes to real utterances"},
        {"torch-report", "LibTorch, BLAS, threads and CUDA (part of `cadenza doctor`)"},
    };
    return commands;
}

const char* torch_command_description(const std::string& name) {
    for (const auto& command : torch_commands())
        if (name == command.name) return command.description;
    return "";
}

std::filesystem::path torch_commands_program() {
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) return {};
    return self.parent_path() / "cadenza-torch";
}

std::string requested_torch_command(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string argument = argv[i];
        if (argument == "--log-level") {
            ++i;
            continue;
        }
        if (!argument.empty() && argument[0] == '-') continue;
        for (const auto& command : torch_commands())
            if (argument == command.name) return argument;
        return {};
    }
    return {};
}

int run_torch_command(const std::string& command, char** argv) {
    const auto program = torch_commands_program();
    std::cout.flush();
    ::execv(program.c_str(), argv);
    const int error = errno;
    std::cerr << "error: `cadenza " << command << "` runs LibTorch models, in " << program.string() << ", which ";
    if (error == ENOENT)
        std::cerr << "is not there: this cadenza was built without LibTorch (-DCADENZA_WITH_TORCH=OFF)\n";
    else
        std::cerr << "cannot be run: " << std::strerror(error) << '\n';
    return exit_user_error;
}

void list_torch_commands(CLI::App& app) {
    for (const auto& command : torch_commands()) {
        if (std::string(command.name) == "torch-report") continue;  // doctor's part
        app.add_subcommand(command.name, std::string(command.description) + " [cadenza-torch]")->allow_extras();
    }
}

}  // namespace cadenza::cli
