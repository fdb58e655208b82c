// Logging through spdlog to standard error. The level comes from the
// command line (--log-level) or else $CADENZA_LOG; plugins log through the
// host table into the same logger.
#pragma once

#include <optional>
#include <string>

#include <spdlog/spdlog.h>

namespace cadenza {

// Parses "trace", "debug", "info", "warn", "error", "off".
std::optional<spdlog::level::level_enum> parse_log_level(const std::string& name);

// Sets the level from `level` if not empty, else from $CADENZA_LOG, else info.
// Throws cadenza::Error on an unknown level name.
void logging_configure(const std::string& level = "");

}  // namespace cadenza
