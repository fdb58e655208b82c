// `cadenza validate FILE...` prints each resolved pipeline, or every error
// with its position.
#pragma once

#include <string>
#include <vector>

#include "command.h"

namespace cadenza::cli {

int validate_pipelines(const std::vector<std::string>& files);

Command add_validate_command(CLI::App& app);

}  // namespace cadenza::cli
