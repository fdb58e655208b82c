// `cadenza-torch torch-report`: LibTorch, the BLAS it uses, threads and CUDA,
// the LibTorch half of `cadenza doctor`.
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_torch_report_command(CLI::App& app);

}  // namespace cadenza::cli
