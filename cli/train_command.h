// `cadenza train lm|draft|mtp|medusa`: trains a target from scratch, an SSD
// shallow draft from a target's layers, or MTP / MEDUSA draft heads on a
// frozen target (docs/training.md).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_train_command(CLI::App& app);

}  // namespace cadenza::cli
