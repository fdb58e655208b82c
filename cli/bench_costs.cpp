#include "bench_costs.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <utility>
#include <vector>

namespace cadenza::cli {

Engine::CostProfile measure_bench_costs(Engine& engine, int repeats) {
    // What the ceiling reads, one token and the size this pipeline's steps
    // verify, is timed in turns between those sizes alone; the table's other
    // sizes after them, in turns of their own. Right after a 32-token pass a
    // one-token pass measured 10% slower than after another one-token pass
    // (0.48 against 0.43 ms; taking turns with every size, 25-40% in a noisy
    // hour of the VM), while in the decoding loop each pass follows passes of
    // its own size.
    // A drafter with a dynamic length, or a tree the acceptor cuts, verifies
    // every size up to its step's in some steps: each is timed, as the cost
    // of a size between two timed ones is not their average (en-small: 3
    // tokens 1.13 one-token passes, 2 and 4 tokens 1.14 and 1.31).
    // A drafter that is not verified evaluates the tokens it emitted (at
    // most its nodes) in its step's pass: that size is timed in turns with
    // one token too (apart, mtp-viterbi's 8 tokens came out at 1.05 and
    // 1.22 one-token passes in one run, in the shipped file and in a copy
    // differing only in its codec, which the costs do not run).
    std::set<int> ceiling_sizes{1};
    std::set<int> table_sizes{2, 4, 8, 16, 32};
    if (engine.has_drafter()) {
        const int step_size = std::max(1, engine.draft_max_nodes() + (engine.verifies_drafts() ? 1 : 0));
        ceiling_sizes.insert(step_size);
        for (int size = 2; size < step_size; ++size) table_sizes.insert(size);
    }
    for (int size : ceiling_sizes) table_sizes.erase(size);

    Engine::CostProfile profile =
        engine.measure_costs(std::vector<int>(ceiling_sizes.begin(), ceiling_sizes.end()), repeats);
    const Engine::CostProfile table = engine.measure_costs(std::vector<int>(table_sizes.begin(), table_sizes.end()),
                                                           repeats, /*with_drafter=*/false);
    std::vector<std::pair<int, double>> seconds_by_size;
    for (const Engine::CostProfile* part : std::initializer_list<const Engine::CostProfile*>{&profile, &table})
        for (size_t k = 0; k < part->sizes.size(); ++k) seconds_by_size.emplace_back(part->sizes[k], part->verify_seconds[k]);
    std::sort(seconds_by_size.begin(), seconds_by_size.end());
    profile.sizes.clear();
    profile.verify_seconds.clear();
    for (const auto& [size, seconds] : seconds_by_size) {
        profile.sizes.push_back(size);
        profile.verify_seconds.push_back(seconds);
    }
    return profile;
}

namespace {

double median(std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    const size_t middle = values.size() / 2;
    return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

// The ceiling reads every cost over the one-token pass, and the step's pass
// after a proposal over the same pass alone. Each round times those pairs
// close together, so each round's ratio is taken first and the median of
// the rounds' ratios scales the median one-token pass: medians taken size by
// size would divide one round's step by another round's one-token pass,
// and a VM whose memory is slower in one round than the next moves one
// token's pass (bound by the weights' bytes) more than a step's (bound by
// the multiply-adds more). Two copies of one pipeline in a 30-sentence run
// modelled their step at 1.43 and 1.22 one-token passes that way.
Engine::CostProfile median_costs(const std::vector<Engine::CostProfile>& rounds) {
    if (rounds.empty()) return {};
    Engine::CostProfile result = rounds.front();
    const auto at_one = std::find(result.sizes.begin(), result.sizes.end(), 1);
    const size_t one_index = static_cast<size_t>(at_one - result.sizes.begin());
    auto one_of = [&](const Engine::CostProfile& round) {
        return at_one != result.sizes.end() && one_index < round.verify_seconds.size() ? round.verify_seconds[one_index]
                                                                                        : 0.0;
    };
    std::vector<double> ones;
    for (const auto& round : rounds)
        if (one_of(round) > 0) ones.push_back(one_of(round));
    const double one = median(ones);
    // The median over the rounds of figure / the round's one-token pass,
    // times the median one-token pass; without one-token passes, the
    // median of the figure.
    auto paired = [&](auto figure) {
        std::vector<double> values;
        for (const auto& round : rounds) {
            const double round_one = one_of(round);
            if (one > 0 && round_one > 0)
                values.push_back(figure(round) / round_one);
            else if (one <= 0)
                values.push_back(figure(round));
        }
        return one > 0 ? median(values) * one : median(values);
    };
    for (size_t k = 0; k < result.sizes.size(); ++k)
        result.verify_seconds[k] = paired([k](const Engine::CostProfile& round) {
            return k < round.verify_seconds.size() ? round.verify_seconds[k] : 0.0;
        });
    result.draft_seconds = paired([](const Engine::CostProfile& round) { return round.draft_seconds; });
    result.draft_level_seconds = paired([](const Engine::CostProfile& round) { return round.draft_level_seconds; });
    result.step_alone_in_turns_seconds =
        paired([](const Engine::CostProfile& round) { return round.step_alone_in_turns_seconds; });
    // The pass after a proposal over the same pass alone, each round's ratio.
    std::vector<double> after_over_alone, draft_levels;
    for (const auto& round : rounds) {
        if (round.step_alone_in_turns_seconds > 0)
            after_over_alone.push_back(round.step_after_proposal_seconds / round.step_alone_in_turns_seconds);
        draft_levels.push_back(round.draft_levels);
    }
    result.step_after_proposal_seconds =
        result.step_alone_in_turns_seconds > 0 && !after_over_alone.empty()
            ? median(after_over_alone) * result.step_alone_in_turns_seconds
            : paired([](const Engine::CostProfile& round) { return round.step_after_proposal_seconds; });
    result.draft_levels = median(draft_levels);
    double context = 0.0;
    for (const auto& round : rounds) context += static_cast<double>(round.context_length);
    result.context_length = static_cast<int64_t>(context / static_cast<double>(rounds.size()) + 0.5);
    return result;
}

}  // namespace cadenza::cli
