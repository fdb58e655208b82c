// `cadenza model init --config CONFIG.json --output DIR [--seed N] [--dtype f32|f16|bf16]`:
// writes DIR/config.json and DIR/model.safetensors with random weights under
// their Hugging Face names, for benchmarks and as the start of training.
#pragma once

#include <cstdint>
#include <string>

#include "command.h"

namespace cadenza::cli {

struct ModelInitOptions {
    std::string config;
    std::string output;
    uint64_t seed = 1;
    std::string dtype = "f32";
    bool force = false;
};

int init_model(const ModelInitOptions& options);

Command add_model_init_command(CLI::App& app);

}  // namespace cadenza::cli
