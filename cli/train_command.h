// `cadenza train lm|draft|mtp|medusa|recurrent`: trains a target from
// scratch, an SSD shallow draft from a target's layers, MTP / MEDUSA draft
// heads or a recurrent draft on a frozen target (docs/training.md).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_train_command(CLI::App& app);

}  // namespace cadenza::cli
