#include "logging.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "error.h"

namespace cadenza {

std::optional<spdlog::level::level_enum> parse_log_level(const std::string& name) {
    if (name == "trace") return spdlog::level::trace;
    if (name == "debug") return spdlog::level::debug;
    if (name == "info") return spdlog::level::info;
    if (name == "warn" || name == "warning") return spdlog::level::warn;
    if (name == "error") return spdlog::level::err;
    if (name == "off") return spdlog::level::off;
    return std::nullopt;
}

void logging_configure(const std::string& level) {
    static bool sink_installed = false;
    if (!sink_installed) {
        auto logger = spdlog::stderr_color_mt("cadenza");
        logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
        spdlog::set_default_logger(logger);
        sink_installed = true;
    }
    std::string name = level;
    std::string source = "--log-level";
    if (name.empty()) {
        const char* from_environment = std::getenv("CADENZA_LOG");
        name = from_environment && *from_environment ? from_environment : "info";
        source = "CADENZA_LOG";
    }
    auto parsed = parse_log_level(name);
    if (!parsed)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    source + ": unknown log level '" + name +
                        "' (expected trace, debug, info, warn, error or off)");
    spdlog::set_level(*parsed);
}

}  // namespace cadenza
