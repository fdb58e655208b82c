// `cadenza plugins` lists every plugin found; `cadenza plugins describe NAME`
// prints one plugin's parameter schema.
#pragma once

#include <string>

#include "command.h"

namespace cadenza::cli {

int list_plugins();
int describe_plugin(const std::string& name);

Command add_plugins_command(CLI::App& app);

}  // namespace cadenza::cli
