// The commands that run LibTorch models live in a second program,
// bin/cadenza-torch, beside bin/cadenza: `cadenza` itself links no LibTorch,
// so the commands that need none (validate, plugins, synth, bench, ...) do
// not pay its start-up, and a build without LibTorch
// (-DCADENZA_WITH_TORCH=OFF) still has them. `cadenza <command>` hands a
// LibTorch command to cadenza-torch with the same arguments.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cadenza::cli {

struct TorchCommand {
    const char* name;
    const char* description;
};

// The commands of cadenza-torch, in the order `cadenza --help` lists them.
const std::vector<TorchCommand>& torch_commands();

// The description of one of them, for the program that implements it.
const char* torch_command_description(const std::string& name);

// bin/cadenza-torch beside the running program.
std::filesystem::path torch_commands_program();

// The command `argv` names, when it is one of torch_commands(): the first
// argument that is not an option of `cadenza` itself (--log-level takes a
// value). Empty otherwise.
std::string requested_torch_command(int argc, char** argv);

// Replaces this process with cadenza-torch and the same arguments. Returns
// only when that is impossible, with the exit code after saying why.
int run_torch_command(const std::string& command, char** argv);

// Lists the commands of cadenza-torch in `app` (for --help); choosing one
// is handled before parsing by run_torch_command.
void list_torch_commands(CLI::App& app);

}  // namespace cadenza::cli
