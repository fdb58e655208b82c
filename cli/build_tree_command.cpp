#include "build_tree_command.h"

#include <iostream>
#include <memory>

#include "exit_codes.h"
#include "medusa_tree_job.h"
#include "torch_commands.h"

namespace cadenza::cli {

Command add_build_tree_command(CLI::App& app) {
    auto* command = app.add_subcommand("build-tree", torch_command_description("build-tree"));
    auto options = std::make_shared<training::MedusaTreeJob>();
    command->add_option("--target", options->target,
                        "the target checkpoint: a directory, a safetensors file or an index .json (config.json beside it)")
        ->required()
        ->check(CLI::ExistingPath);
    command->add_option("--heads", options->heads, "the heads file (safetensors)")->required()->check(CLI::ExistingFile);
    command->add_option("--corpus", options->corpus,
                        "held-out token corpus: one sequence per line, 'prompt_ids | target_ids'")
        ->required()
        ->check(CLI::ExistingFile);
    command->add_option("--output", options->output, "the choices file to write")->required();
    command->add_option("--budget", options->budget, "nodes of the tree (default 64)")->check(CLI::PositiveNumber);
    command->add_option("--top-k", options->top_k, "candidates per head; ranks below it (default 10)")
        ->check(CLI::PositiveNumber);
    command->add_option("--max-depth", options->max_depth, "levels of the tree (default: every head)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--threads", options->threads, "intra-op threads (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--objective", options->objective,
                        "speedup (default): cut the greedy tree where expected tokens per measured step cost peak; "
                        "acceptance: keep all --budget nodes")
        ->check(CLI::IsMember({"speedup", "acceptance"}));
    command->add_option("--temperature", options->temperature,
                        "the pipeline's temperature, for the cost of its distributions (default 0.7)")
        ->check(CLI::NonNegativeNumber);
    command->add_option("--top-p", options->top_p, "the pipeline's top-p (default 0.9)")->check(CLI::Range(0.0, 1.0));
    command->add_option("--context", options->context,
                        "committed tokens before the measured passes, a synthesis's typical context (default 256)")
        ->check(CLI::PositiveNumber);
    return {command, [options] {
                training::run_medusa_tree_job(*options, std::cout);
                return exit_ok;
            }};
}

}  // namespace cadenza::cli
