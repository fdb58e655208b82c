#include "model_init_command.h"

#include <iostream>
#include <memory>

#include "exit_codes.h"
#include "random_model_job.h"
#include "torch_commands.h"

namespace cadenza::cli {

Command add_model_init_command(CLI::App& app) {
    auto* model = app.add_subcommand("model", torch_command_description("model"));
    model->require_subcommand(1);
    auto* init = model->add_subcommand("init", "write a LLaMA config and random weights (Hugging Face names)");
    auto options = std::make_shared<training::RandomModelJob>();
    init->add_option("--config", options->config, "a Hugging Face config.json (LLaMA or Qwen2)")
        ->required()
        ->check(CLI::ExistingFile);
    init->add_option("--output", options->output, "directory for config.json and model.safetensors")->required();
    init->add_option("--seed", options->seed, "seed of the random weights")->capture_default_str();
    init->add_option("--dtype", options->dtype, "stored type of the weights")
        ->check(CLI::IsMember({"f32", "f16", "bf16"}))
        ->capture_default_str();
    init->add_flag("--force", options->force, "overwrite an existing config.json and model.safetensors");
    return {model, [options] {
                training::run_random_model_job(*options, std::cout);
                return exit_ok;
            }};
}

}  // namespace cadenza::cli
