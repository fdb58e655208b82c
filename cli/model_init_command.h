// `cadenza model init --config CONFIG.json --output DIR [--seed N] [--dtype f32|f16|bf16]`:
// the options of training's random model job (training/random_model_job.h).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_model_init_command(CLI::App& app);

}  // namespace cadenza::cli
