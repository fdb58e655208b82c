// cadenza: the command line. Exit codes: 0 ok, 1 user error, 2 internal error.
// The commands that run LibTorch models are cadenza-torch's (torch_commands.h).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_command.h"
#include "build_groups_command.h"
#include "build_transitions_command.h"
#include "command.h"
#include "command_line.h"
#include "corpus_command.h"
#include "doctor_command.h"
#include "plugins_command.h"
#include "synth_command.h"
#include "torch_commands.h"
#include "transcribe_command.h"
#include "validate_command.h"
#include "wer_command.h"

int main(int argc, char** argv) {
    using namespace cadenza::cli;
    if (const std::string command = requested_torch_command(argc, argv); !command.empty())
        return run_torch_command(command, argv);

    CLI::App app{"cadenza: fast autoregressive speech synthesis through composable plugins"};
    app.require_subcommand(1);
    std::string log_level;
    add_log_level_option(app, log_level);

    // Subcommands in the order `cadenza --help` lists them.
    std::vector<Command> commands;
    commands.push_back(add_synth_command(app));
    commands.push_back(add_plugins_command(app));
    commands.push_back(add_validate_command(app));
    commands.push_back(add_doctor_command(app));
    commands.push_back(add_build_groups_command(app));
    commands.push_back(add_build_transitions_command(app));
    commands.push_back(add_bench_command(app));
    commands.push_back(add_corpus_command(app));
    commands.push_back(add_transcribe_command(app));
    commands.push_back(add_wer_command(app));
    list_torch_commands(app);
    return run_command_line(app, commands, log_level, argc, argv);
}
