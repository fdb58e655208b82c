// cadenza: the command line. Exit codes: 0 ok, 1 user error, 2 internal error.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_command.h"
#include "build_groups_command.h"
#include "build_transitions_command.h"
#include "build_tree_command.h"
#include "codec_command.h"
#include "target_command.h"
#include "command.h"
#include "corpus_command.h"
#include "doctor_command.h"
#include "exit_codes.h"
#include "logging.h"
#include "model_init_command.h"
#include "plugins_command.h"
#include "synth_command.h"
#include "train_command.h"
#include "transcribe_command.h"
#include "validate_command.h"
#include "wer_command.h"

int main(int argc, char** argv) {
    using namespace cadenza::cli;
    CLI::App app{"cadenza: fast autoregressive speech synthesis through composable plugins"};
    app.require_subcommand(1);
    std::string log_level;
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (default: $CADENZA_LOG, else info)");

    // Subcommands in the order `cadenza --help` lists them.
    std::vector<Command> commands;
    commands.push_back(add_synth_command(app));
    commands.push_back(add_plugins_command(app));
    commands.push_back(add_validate_command(app));
    commands.push_back(add_doctor_command(app));
    commands.push_back(add_build_groups_command(app));
    commands.push_back(add_build_transitions_command(app));
    commands.push_back(add_build_tree_command(app));
    commands.push_back(add_bench_command(app));
    commands.push_back(add_model_init_command(app));
    commands.push_back(add_corpus_command(app));
    commands.push_back(add_train_command(app));
    commands.push_back(add_codec_command(app));
    commands.push_back(add_target_command(app));
    commands.push_back(add_transcribe_command(app));
    commands.push_back(add_wer_command(app));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int code = app.exit(error);
        return code == 0 ? exit_ok : exit_user_error;
    }

    try {
        cadenza::logging_configure(log_level);
        for (const auto& command : commands)
            if (command.app->parsed()) return command.run();
    } catch (const std::exception& error) {
        return report_exception(error);
    }
    return exit_internal_error;
}
