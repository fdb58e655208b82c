// `cadenza doctor`: LibTorch version, BLAS, threads, CUDA and the plugin
// search path, with warnings for what would make decoding slow.
#pragma once

namespace cadenza::cli {

int run_doctor();

}  // namespace cadenza::cli
