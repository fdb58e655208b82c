#include "medusa_tree_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include <c10/core/InferenceMode.h>

#include "error.h"
#include "head_accuracy.h"
#include "hidden_state_heads.h"
#include "llama_model.h"
#include "medusa_tree.h"
#include "thread_policy.h"
#include "token_corpus.h"
#include "tree_step_cost.h"

namespace cadenza::training {
namespace {

using Clock = std::chrono::steady_clock;

std::string fixed(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", digits, value);
    return text;
}

}  // namespace

void run_medusa_tree_job(const MedusaTreeJob& options, std::ostream& out) {
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
    llama::LlamaModel model(llama::LlamaWeights::load(target, config, at::kCPU), config.max_position_embeddings);
    model.pack_panels();  // backbone.llama's pass, so that the tree is built for its cost
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
    const TokenCorpus file = load_token_corpus(options.corpus);
    file.check_vocabulary(config.vocab_size, options.target);
    std::vector<medusa::CorpusSequence> corpus;
    for (const auto& sequence : file.sequences)
        corpus.push_back({sequence.tokens, static_cast<size_t>(sequence.prompt_length)});
    if (corpus.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.corpus + ": the corpus holds no sequence");
    out << "target " << options.target << ": " << config.num_hidden_layers << " layers, hidden "
              << config.hidden_size << ", vocabulary " << config.vocab_size << "\n"
              << "heads " << options.heads << ": " << heads.count() << " heads"
              << (heads.kind().empty() ? "" : " (" + heads.kind() + ")") << "\n";

    const auto measure_start = Clock::now();
    const medusa::HeadAccuracy accuracy = medusa::measure_head_accuracy(
        model, heads, corpus, std::max<int64_t>(options.top_k, 5), config.max_position_embeddings);
    const double measure_seconds = std::chrono::duration<double>(Clock::now() - measure_start).count();
    out << "measured " << corpus.size() << " sequences in " << fixed(measure_seconds, 2) << " s\n"
              << "head  positions  top-1   top-5   top-" << options.top_k << "\n";
    for (int64_t i = 0; i < heads.count(); ++i) {
        char line[128];
        std::snprintf(line, sizeof(line), "%4lld  %9lld  %6.4f  %6.4f  %6.4f%s\n", static_cast<long long>(i),
                      static_cast<long long>(accuracy.positions[static_cast<size_t>(i)]),
                      accuracy.top(static_cast<size_t>(i), 1), accuracy.top(static_cast<size_t>(i), 5),
                      accuracy.top(static_cast<size_t>(i), options.top_k), i < depth ? "" : "  (beyond --max-depth)");
        out << line;
    }
    for (int64_t i = 0; i < depth; ++i)
        if (accuracy.positions[static_cast<size_t>(i)] == 0)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        options.corpus + ": no position to measure head " + std::to_string(i) +
                            " on (the sequences' targets are too short)");

    medusa::RankAccuracy rank_accuracy = accuracy.rank_accuracy(options.top_k);
    rank_accuracy.resize(static_cast<size_t>(depth));
    std::vector<medusa::Choice> choices;
    std::string objective_comment = "MEDUSA's greedy construction, all " + std::to_string(options.budget) + " nodes";
    if (options.objective == "speedup") {
        TreeStepCostOptions cost_options;
        cost_options.max_nodes = options.budget;
        cost_options.context = options.context;
        cost_options.sampling = cdz_sampling{sizeof(cdz_sampling), options.temperature, 0, options.top_p, 0, 0, -1};
        const auto cost_start = Clock::now();
        const medusa::StepCost cost = measure_tree_step_cost(model, heads, cost_options);
        out << "measured step costs for 1.." << options.budget << " nodes in "
                  << fixed(std::chrono::duration<double>(Clock::now() - cost_start).count(), 2)
                  << " s (relative to plain decoding's step)\n"
                  << "nodes  expected tokens/step  step cost  predicted speedup\n";
        const auto order = medusa::greedy_order(rank_accuracy, options.budget, depth);
        double expected_tokens = 1.0;
        int64_t deepest = 0;
        for (size_t n = 1; n <= order.size(); ++n) {
            expected_tokens += medusa::acceptance_probability(order[n - 1], rank_accuracy);
            deepest = std::max<int64_t>(deepest, static_cast<int64_t>(order[n - 1].size()));
            if ((n & (n - 1)) == 0 || n == order.size()) {
                const double step_cost = cost(static_cast<int64_t>(n), deepest);
                char line[128];
                std::snprintf(line, sizeof(line), "%5zu  %20.4f  %9.3f  %17.3f\n", n, expected_tokens, step_cost,
                              expected_tokens / step_cost);
                out << line;
            }
        }
        const medusa::CostedTree best = medusa::greedy_tree_per_cost(rank_accuracy, options.budget, depth, cost);
        choices = best.choices;
        objective_comment = "MEDUSA's greedy construction cut at the highest expected tokens per measured step cost: " +
                            fixed(best.expected_tokens, 4) + " tokens per step at " + fixed(best.step_cost, 3) +
                            " plain steps, predicted speedup " + fixed(best.speedup(), 3) + " (t " +
                            fixed(options.temperature, 2) + ", top-p " + fixed(options.top_p, 2) + ")";
        out << "chosen: " << choices.size() << " nodes, predicted speedup " << fixed(best.speedup(), 3)
                  << (best.speedup() < 1.0 ? " (no tree of these heads beats plain decoding on this machine)" : "")
                  << "\n";
    } else if (options.objective == "acceptance") {
        choices = medusa::greedy_tree(rank_accuracy, options.budget, depth);
    } else {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--objective must be 'speedup' or 'acceptance', got '" +
                                                     options.objective + "'");
    }
    const double expected = medusa::expected_accepted_drafts(choices, rank_accuracy);
    int64_t deepest = 0;
    for (const auto& choice : choices) deepest = std::max<int64_t>(deepest, static_cast<int64_t>(choice.size()));
    medusa::write_choices(
        options.output, choices,
        {"draft.medusa choices written by cadenza build-tree (" + objective_comment + ")",
         std::to_string(choices.size()) + " nodes, depth " + std::to_string(deepest) + ", top_k " +
             std::to_string(options.top_k) + ", budget " + std::to_string(options.budget),
         "expected accepted drafts per step " + fixed(expected, 4) + ", tokens per step " + fixed(expected + 1.0, 4),
         "heads " + options.heads + ", corpus " + options.corpus});
    if (options.objective == "acceptance" && static_cast<int64_t>(choices.size()) < options.budget)
        out << "only " << choices.size() << " nodes have a positive expected acceptance (budget "
                  << options.budget << ")\n";
    out << "wrote " << options.output << ": " << choices.size() << " nodes, depth " << deepest << ", top_k "
              << options.top_k << "\n"
              << "expected acceptance length: " << fixed(expected + 1.0, 4) << " tokens per step ("
              << fixed(expected, 4) << " accepted drafts + the target's token)\n"
              << "total " << fixed(std::chrono::duration<double>(Clock::now() - start).count(), 2) << " s\n";
}

}  // namespace cadenza::training
