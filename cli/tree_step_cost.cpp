#include "tree_step_cost.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

#include "kv_cache.h"
#include "sampling.h"

namespace cadenza::cli {
namespace {

template <typename Body>
double median_seconds(int repeats, Body&& body) {
    body();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        body();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

medusa::StepCost measure_tree_step_cost(const llama::LlamaModel& model, const drafts::DraftHeads& heads,
                                        const TreeStepCostOptions& options) {
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
    // seconds[m]: a pass of m tokens and their distributions.
    std::vector<double> seconds(static_cast<size_t>(largest) + 1, 0.0);
    for (int64_t m = 1; m <= largest; ++m)
        seconds[static_cast<size_t>(m)] = median_seconds(options.repeats, [&] { sample_rows(chain(context, m).logits); });

    std::vector<float> hidden(static_cast<size_t>(heads.hidden_size()), 0.01f);
    const drafts::TokenRange all{0, vocab, -1};
    std::vector<double> proposal(static_cast<size_t>(heads.count()) + 1, 0.0);
    for (int64_t depth = 1; depth <= heads.count(); ++depth)
        proposal[static_cast<size_t>(depth)] = median_seconds(
            options.repeats, [&] { sample_rows(heads.step_logits(hidden.data(), false, depth, all)); });

    const double plain = seconds[1];
    return [seconds, proposal, plain](int64_t nodes, int64_t depth) {
        const auto m = static_cast<size_t>(std::clamp<int64_t>(nodes + 1, 1, static_cast<int64_t>(seconds.size()) - 1));
        const auto d = static_cast<size_t>(std::clamp<int64_t>(depth, 0, static_cast<int64_t>(proposal.size()) - 1));
        return (seconds[m] + proposal[d]) / plain;
    };
}

}  // namespace cadenza::cli
