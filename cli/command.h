// A subcommand of `cadenza`: its CLI11 app and what to run when it is chosen.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace cadenza::cli {

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;  // returns the exit code
};

}  // namespace cadenza::cli
