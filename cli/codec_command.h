// `cadenza codec ...`: codec tools. `evaluate` runs the mel-FSQ codec's
// quality gate (evaluation/codec_resynthesis.h).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_codec_command(CLI::App& app);

}  // namespace cadenza::cli
