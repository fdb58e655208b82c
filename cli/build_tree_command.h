// `cadenza build-tree`: the options of training's MEDUSA tree job
// (training/medusa_tree_job.h), which measures the heads and writes the tree.
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_build_tree_command(CLI::App& app);

}  // namespace cadenza::cli
