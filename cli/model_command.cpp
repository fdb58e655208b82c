#include "model_command.h"

#include <iostream>
#include <memory>

#include "exit_codes.h"
#include "random_model_job.h"
#include "torch_commands.h"
#include "train_jobs.h"

namespace cadenza::cli {

Command add_model_command(CLI::App& app) {
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

    auto* digit_head = model->add_subcommand(
        "digit-head", "write a code-digit head for a target's own last hidden state (draft.shallow's digit_head): its output "
        "table factorized, or a trained one");
    auto head = std::make_shared<training::DigitHeadJob>();
    digit_head->add_option("--target", head->target, "the target's model directory")
        ->required()
        ->check(CLI::ExistingDirectory);
    auto* levels = digit_head->add_option("--code-digits", head->code_digits,
                                          "the codec's FSQ levels, least significant first (8,8,8,4,4): the "
                                          "factorized output table's head");
    auto* layout = digit_head->add_option("--layout", head->layout, "the token corpus's layout.json (where the codes are)")
                       ->check(CLI::ExistingFile);
    auto* from = digit_head->add_option("--from", head->trained_draft,
                                        "instead: the head a `train draft --layers <every layer> --train-layers none` "
                                        "run trained (its output directory)")
                     ->check(CLI::ExistingDirectory);
    levels->needs(layout);
    layout->needs(levels);
    from->excludes(levels)->excludes(layout);
    digit_head->add_option("--output", head->output, "the safetensors file to write")->required();
    digit_head->add_flag("--force", head->force, "overwrite an existing output");
    return {model, [init, options, head] {
                if (init->parsed())
                    training::run_random_model_job(*options, std::cout);
                else
                    training::run_digit_head_job(*head, std::cout);
                return exit_ok;
            }};
}

}  // namespace cadenza::cli
