// `cadenza model init --config CONFIG.json --output DIR [--seed N] [--dtype f32|f16|bf16]`:
// the options of training's random model job (training/random_model_job.h).
// `cadenza model digit-head --target DIR (--code-digits LEVELS --layout FILE | --from DRAFT) --output FILE`:
// a code-digit head for the target's own hidden state (training/train_jobs.h, DigitHeadJob).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_model_command(CLI::App& app);

}  // namespace cadenza::cli
