// What `cadenza` and `cadenza-torch` share around their commands: the
// --log-level option, parsing, and running the chosen command with the exit
// codes of exit_codes.h.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "command.h"

namespace cadenza::cli {

// Parses argv into `app` (whose --log-level writes `log_level`), configures
// logging, and runs the command that was chosen.
int run_command_line(CLI::App& app, const std::vector<Command>& commands, const std::string& log_level, int argc,
                     char** argv);

// Adds cadenza's global --log-level option.
void add_log_level_option(CLI::App& app, std::string& log_level);

}  // namespace cadenza::cli
