// `cadenza doctor`: LibTorch version, BLAS, threads, CUDA and the plugin
// search path, with warnings for what would make decoding slow.
#pragma once

#include "command.h"

namespace cadenza::cli {

int run_doctor();

Command add_doctor_command(CLI::App& app);

}  // namespace cadenza::cli
