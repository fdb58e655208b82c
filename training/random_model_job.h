// `cadenza model init`: a LLaMA config.json and random weights under their
// Hugging Face names, for benchmarks and as the start of training.
// Plain types only (no LibTorch in this header), as train_jobs.h.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace cadenza::training {

struct RandomModelJob {
    std::string config;  // a Hugging Face config.json (LLaMA or Qwen2)
    std::string output;  // directory for config.json and model.safetensors
    uint64_t seed = 1;
    std::string dtype = "f32";  // stored type: f32, f16 or bf16
    bool force = false;         // overwrite existing files
};

// Writes OUTPUT/config.json and OUTPUT/model.safetensors and says so on `out`.
void run_random_model_job(const RandomModelJob& job, std::ostream& out);

}  // namespace cadenza::training
