// cadenza: the command line. Exit codes: 0 ok, 1 user error, 2 internal error.
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "doctor_command.h"
#include "exit_codes.h"
#include "logging.h"
#include "plugins_command.h"
#include "validate_command.h"

int main(int argc, char** argv) {
    using namespace cadenza::cli;
    CLI::App app{"cadenza: fast autoregressive speech synthesis through composable plugins"};
    app.require_subcommand(1);
    std::string log_level;
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (default: $CADENZA_LOG, else info)");

    auto* plugins = app.add_subcommand("plugins", "list every plugin found along the search path");
    std::string describe_name;
    auto* describe = plugins->add_subcommand("describe", "print a plugin's parameter schema");
    describe->add_option("name", describe_name, "plugin name, e.g. frontend.chars")->required();

    auto* validate = app.add_subcommand("validate", "print resolved pipelines, or every error with its position");
    std::vector<std::string> pipeline_files;
    validate->add_option("files", pipeline_files, "pipeline TOML files")->required()->check(CLI::ExistingFile);

    auto* doctor = app.add_subcommand("doctor", "LibTorch, BLAS, threads, CUDA and the plugin search path");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        const int code = app.exit(error);
        return code == 0 ? exit_ok : exit_user_error;
    }

    try {
        cadenza::logging_configure(log_level);
        if (*describe) return describe_plugin(describe_name);
        if (*plugins) return list_plugins();
        if (*validate) return validate_pipelines(pipeline_files);
        if (*doctor) return run_doctor();
    } catch (const std::exception& error) {
        return report_exception(error);
    }
    return exit_internal_error;
}
