#include "tree_step_cost.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "cadenza/sdk/plugin_error.hpp"
#include "host_api.h"
#include "kv_cache.h"
#include "sampling.h"

namespace cadenza::training {
namespace {

template <typename Body>
double seconds_of(Body&& body) {
    const auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The fastest of `repeats` rounds, each round timing every measurement once:
// whatever else runs on the machine lengthens some rounds, never shortens
// one, and interleaving spreads it over all the sizes alike.
template <typename Measure>
std::vector<double> fastest_of_rounds(size_t count, int repeats, Measure&& measure) {
    for (size_t i = 0; i < count; ++i) measure(i);  // warm-up
    std::vector<double> fastest(count, std::numeric_limits<double>::infinity());
    for (int r = 0; r < std::max(repeats, 1); ++r)
        for (size_t i = 0; i < count; ++i) fastest[i] = std::min(fastest[i], seconds_of([&] { measure(i); }));
    return fastest;
}

}  // namespace

medusa::StepCost measure_tree_step_cost(const llama::LlamaModel& model, const drafts::DraftHeads& heads,
                                        const TreeStepCostOptions& options) {
    // The heads sample through the host's services, this process's own.
    sdk::library().host = host_api();
    const llama::LlamaConfig& config = model.config();
    const int64_t largest = options.max_nodes + 1;
    const int64_t context = std::max<int64_t>(
        1, std::min<int64_t>(options.context, config.max_position_embeddings - largest - 1));
    const int64_t vocab = config.vocab_size;
    std::vector<int32_t> tokens(static_cast<size_t>(context + largest));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 7919) % vocab);

    llama::KvCache cache(config, context + largest + 1, model.device());
    const auto chain = [&](int64_t from, int64_t count) {
        std::vector<int32_t> parents(static_cast<size_t>(count));
        std::iota(parents.begin(), parents.end(), -1);
        return model.forward_tree(
            cache, std::vector<int32_t>(tokens.begin() + from, tokens.begin() + from + count), parents);
    };
    chain(0, context);
    std::vector<int64_t> path(static_cast<size_t>(context));
    std::iota(path.begin(), path.end(), 0);
    cache.commit(path);

    std::vector<float> distribution(static_cast<size_t>(vocab));
    const auto sample_rows = [&](const at::Tensor& logits) {
        const at::Tensor rows = logits.contiguous();
        for (int64_t r = 0; r < rows.size(0); ++r)
            sampling_probabilities(options.sampling, rows.data_ptr<float>() + r * vocab, distribution.data(), vocab);
    };
    // seconds[m]: a pass of m tokens and their distributions (m = 0 unused).
    std::vector<double> seconds = fastest_of_rounds(static_cast<size_t>(largest) + 1, options.repeats, [&](size_t m) {
        if (m > 0) sample_rows(chain(context, static_cast<int64_t>(m)).logits);
    });
    std::vector<float> hidden(static_cast<size_t>(heads.hidden_size()), 0.01f);
    const drafts::TokenRange all{0, vocab, -1};
    // proposal[d]: the heads' logits and distributions for d levels.
    std::vector<double> proposal =
        fastest_of_rounds(static_cast<size_t>(heads.count()) + 1, options.repeats, [&](size_t depth) {
            if (depth == 0) return;
            drafts::DraftHeads::Step step = heads.step(hidden.data(), false, static_cast<int64_t>(depth), all);
            for (int64_t r = 0; r < step.rows(); ++r) step.probabilities(r, &options.sampling, distribution.data());
        });
    proposal[0] = 0.0;

    const double plain = seconds[1];
    return [seconds, proposal, plain](int64_t nodes, int64_t depth) {
        const auto m = static_cast<size_t>(std::clamp<int64_t>(nodes + 1, 1, static_cast<int64_t>(seconds.size()) - 1));
        const auto d = static_cast<size_t>(std::clamp<int64_t>(depth, 0, static_cast<int64_t>(proposal.size()) - 1));
        return (seconds[m] + proposal[d]) / plain;
    };
}

}  // namespace cadenza::training
