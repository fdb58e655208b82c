#include "bench_costs.h"

#include <algorithm>
#include <set>
#include <vector>

namespace cadenza::cli {

Engine::CostProfile measure_bench_costs(Engine& engine, int repeats) {
    // The sizes of the table, and the size this pipeline's steps verify.
    std::set<int> sizes{1, 2, 4, 8, 16, 32};
    if (engine.has_drafter() && engine.verifies_drafts()) sizes.insert(engine.draft_max_nodes() + 1);
    return engine.measure_costs(std::vector<int>(sizes.begin(), sizes.end()), repeats);
}

namespace {

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

Engine::CostProfile median_costs(const std::vector<Engine::CostProfile>& rounds) {
    if (rounds.empty()) return {};
    Engine::CostProfile result = rounds.front();
    for (size_t k = 0; k < result.sizes.size(); ++k) {
        std::vector<double> seconds;
        for (const auto& round : rounds)
            if (k < round.verify_seconds.size()) seconds.push_back(round.verify_seconds[k]);
        result.verify_seconds[k] = median(seconds);
    }
    std::vector<double> draft;
    double context = 0.0;
    for (const auto& round : rounds) {
        draft.push_back(round.draft_seconds);
        context += static_cast<double>(round.context_length);
    }
    result.draft_seconds = median(draft);
    result.context_length = static_cast<int64_t>(context / static_cast<double>(rounds.size()) + 0.5);
    return result;
}

}  // namespace cadenza::cli
