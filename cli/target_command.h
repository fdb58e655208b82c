// `cadenza target evaluate`: a TTS target fed the truth, its most likely codes
// decoded and judged by pocketsphinx (evaluation/teacher_forced_target.h).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_target_command(CLI::App& app);

}  // namespace cadenza::cli
