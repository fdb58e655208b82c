// cadenza-torch: the commands of `cadenza` that run LibTorch models
// (torch_commands.h); `cadenza` hands them over with the same arguments.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "build_tree_command.h"
#include "codec_command.h"
#include "command.h"
#include "command_line.h"
#include "model_command.h"
#include "target_command.h"
#include "torch_report_command.h"
#include "train_command.h"

int main(int argc, char** argv) {
    using namespace cadenza::cli;
    CLI::App app{"cadenza: fast autoregressive speech synthesis through composable plugins (the commands that run "
                 "LibTorch models)",
                 "cadenza"};
    app.require_subcommand(1);
    std::string log_level;
    add_log_level_option(app, log_level);

    std::vector<Command> commands;
    commands.push_back(add_build_tree_command(app));
    commands.push_back(add_model_command(app));
    commands.push_back(add_train_command(app));
    commands.push_back(add_codec_command(app));
    commands.push_back(add_target_command(app));
    commands.push_back(add_torch_report_command(app));
    return run_command_line(app, commands, log_level, argc, argv);
}
