#include "build_tree_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <c10/core/InferenceMode.h>

#include "hidden_state_heads.h"
#include "error.h"
#include "exit_codes.h"
#include "head_accuracy.h"
#include "llama_model.h"
#include "medusa_tree.h"
#include "thread_policy.h"
#include "token_corpus.h"

namespace cadenza::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", digits, value);
    return text;
}

}  // namespace

int build_tree(const BuildTreeOptions& options) {
    if (options.budget < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--budget must be at least 1");
    if (options.top_k < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--top-k must be at least 1");
    if (options.max_depth < 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--max-depth must be >= 0");
    const auto start = Clock::now();
    llama::apply_thread_policy(options.threads);
    const std::filesystem::path target = options.target;
    const std::filesystem::path config_path =
        (std::filesystem::is_directory(target) ? target : target.parent_path()) / "config.json";
    const llama::LlamaConfig config = llama::LlamaConfig::from_file(config_path);

    c10::InferenceMode inference;
    const llama::LlamaModel model(llama::LlamaWeights::load(target, config, at::kCPU), config.max_position_embeddings);
    const drafts::DraftHeads heads(options.heads, model.weights().lm_head);
    if (heads.vocab_size() != config.vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.target + ": the output head has " +
                                                     std::to_string(heads.vocab_size()) + " rows, the config says " +
                                                     std::to_string(config.vocab_size));
    const int64_t depth = options.max_depth > 0 ? options.max_depth : heads.count();
    if (depth > heads.count())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--max-depth " + std::to_string(depth) + " exceeds the " +
                                                     std::to_string(heads.count()) + " heads of " + options.heads);
    // The training tools' corpus reader: "prompt_ids | target_ids" per line.
    const training::TokenCorpus file = training::load_token_corpus(options.corpus);
    file.check_vocabulary(config.vocab_size, options.target);
    std::vector<medusa::CorpusSequence> corpus;
    for (const auto& sequence : file.sequences)
        corpus.push_back({sequence.tokens, static_cast<size_t>(sequence.prompt_length)});
    if (corpus.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.corpus + ": the corpus holds no sequence");
    std::cout << "target " << options.target << ": " << config.num_hidden_layers << " layers, hidden "
              << config.hidden_size << ", vocabulary " << config.vocab_size << "\n"
              << "heads " << options.heads << ": " << heads.count() << " heads"
              << (heads.kind().empty() ? "" : " (" + heads.kind() + ")") << "\n";

    const auto measure_start = Clock::now();
    const medusa::HeadAccuracy accuracy = medusa::measure_head_accuracy(
        model, heads, corpus, std::max<int64_t>(options.top_k, 5), config.max_position_embeddings);
    const double measure_seconds = std::chrono::duration<double>(Clock::now() - measure_start).count();
    std::cout << "measured " << corpus.size() << " sequences in " << fixed(measure_seconds, 2) << " s\n"
              << "head  positions  top-1   top-5   top-" << options.top_k << "\n";
    for (int64_t i = 0; i < heads.count(); ++i) {
        char line[128];
        std::snprintf(line, sizeof(line), "%4lld  %9lld  %6.4f  %6.4f  %6.4f%s\n", static_cast<long long>(i),
                      static_cast<long long>(accuracy.positions[static_cast<size_t>(i)]),
                      accuracy.top(static_cast<size_t>(i), 1), accuracy.top(static_cast<size_t>(i), 5),
                      accuracy.top(static_cast<size_t>(i), options.top_k), i < depth ? "" : "  (beyond --max-depth)");
        std::cout << line;
    }
    for (int64_t i = 0; i < depth; ++i)
        if (accuracy.positions[static_cast<size_t>(i)] == 0)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        options.corpus + ": no position to measure head " + std::to_string(i) +
                            " on (the sequences' targets are too short)");

    medusa::RankAccuracy rank_accuracy = accuracy.rank_accuracy(options.top_k);
    rank_accuracy.resize(static_cast<size_t>(depth));
    const auto choices = medusa::greedy_tree(rank_accuracy, options.budget, depth);
    const double expected = medusa::expected_accepted_drafts(choices, rank_accuracy);
    int64_t deepest = 0;
    for (const auto& choice : choices) deepest = std::max<int64_t>(deepest, static_cast<int64_t>(choice.size()));
    medusa::write_choices(
        options.output, choices,
        {"draft.medusa choices written by cadenza build-tree (MEDUSA's greedy construction)",
         std::to_string(choices.size()) + " nodes, depth " + std::to_string(deepest) + ", top_k " +
             std::to_string(options.top_k) + ", budget " + std::to_string(options.budget),
         "expected accepted drafts per step " + fixed(expected, 4) + ", tokens per step " + fixed(expected + 1.0, 4),
         "heads " + options.heads + ", corpus " + options.corpus});
    if (static_cast<int64_t>(choices.size()) < options.budget)
        std::cout << "only " << choices.size() << " nodes have a positive expected acceptance (budget "
                  << options.budget << ")\n";
    std::cout << "wrote " << options.output << ": " << choices.size() << " nodes, depth " << deepest << ", top_k "
              << options.top_k << "\n"
              << "expected acceptance length: " << fixed(expected + 1.0, 4) << " tokens per step ("
              << fixed(expected, 4) << " accepted drafts + the target's token)\n"
              << "total " << fixed(std::chrono::duration<double>(Clock::now() - start).count(), 2) << " s\n";
    return exit_ok;
}

Command add_build_tree_command(CLI::App& app) {
    auto* command = app.add_subcommand(
        "build-tree", "measure draft heads' top-k accuracy and build draft.medusa's sparse tree (MEDUSA's greedy)");
    auto options = std::make_shared<BuildTreeOptions>();
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
    return {command, [options] { return build_tree(*options); }};
}

}  // namespace cadenza::cli
