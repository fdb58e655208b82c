// `cadenza doctor`: LibTorch version, BLAS, threads, CUDA (cadenza-torch's
// torch-report) and the plugin search path, with warnings for what would make
// decoding slow.
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_doctor_command(CLI::App& app);

}  // namespace cadenza::cli
