#include "bench_costs.h"

#include <set>
#include <vector>

namespace cadenza::cli {

Engine::CostProfile measure_bench_costs(Engine& engine, int repeats) {
    // The sizes of the table, and the size this pipeline's steps verify.
    std::set<int> sizes{1, 2, 4, 8, 16, 32};
    if (engine.has_drafter() && engine.verifies_drafts()) sizes.insert(engine.draft_max_nodes() + 1);
    return engine.measure_costs(std::vector<int>(sizes.begin(), sizes.end()), repeats);
}

}  // namespace cadenza::cli
