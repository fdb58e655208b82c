#include "command_line.h"

#include "exit_codes.h"
#include "logging.h"

namespace cadenza::cli {

void add_log_level_option(CLI::App& app, std::string& log_level) {
    app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off (default: $CADENZA_LOG, else info)");
}

int run_command_line(CLI::App& app, const std::vector<Command>& commands, const std::string& log_level, int argc,
                     char** argv) {
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

}  // namespace cadenza::cli
