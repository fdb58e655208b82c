// `cadenza synth`: one text to a WAV file through a pipeline, with the run's
// statistics (tokens, steps, mean accepted length, speed, real-time factor,
// time to the first audio).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_synth_command(CLI::App& app);

}  // namespace cadenza::cli
