// `cadenza plugins` lists every plugin found; `cadenza plugins describe NAME`
// prints one plugin's parameter schema.
#pragma once

#include <string>

namespace cadenza::cli {

int list_plugins();
int describe_plugin(const std::string& name);

}  // namespace cadenza::cli
