// MEDUSA's sparse candidate tree (Cai et al., ICML 2024; VADUSA, Li et al.,
// ICASSP 2025, Section 3-D): the choices file that describes it, the tree it
// makes, and the greedy construction from per-head rank accuracies.
//
// A choice is a path of top-k ranks (r_1, ..., r_d): the node whose token is
// the r_d-th most likely token of head d - 1, under the node of
// (r_1, ..., r_{d-1}) (under the pending token when d = 1).
//
// Choices file: UTF-8 text, one choice per line as comma-separated ranks
// ("0", "0,1", "1,0,2"; spaces around ranks allowed). '#' starts a comment
// to the end of the line; blank lines are skipped. Validated: every rank is
// a non-negative integer below top_k, every proper prefix of a choice is
// itself a choice of the file (in any order), no choice appears twice, and
// the file holds at least one. Errors name the file and line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace cadenza::medusa {

using Choice = std::vector<int32_t>;

// "0,1,2"
std::string format_choice(const Choice& choice);

// Parses and validates choices; `where` names the source in errors
// ("FILE:LINE: ..."), thrown as cadenza::sdk::Error(CDZ_STATUS_INVALID_CONFIG).
// Returns them in tree order: by length, then lexicographically.
std::vector<Choice> parse_choices(const std::string& text, const std::string& where, int64_t top_k);
std::vector<Choice> read_choices(const std::filesystem::path& path, int64_t top_k);

// Writes choices one per line after `comments` (each written as "# ...").
void write_choices(const std::filesystem::path& path, const std::vector<Choice>& choices,
                   const std::vector<std::string>& comments = {});

// The tree of validated choices (in tree order): node i is choices[i].
struct SparseTree {
    std::vector<Choice> choices;
    std::vector<int32_t> parents;  // -1: a child of the pending token
    int32_t depth = 0;             // the longest choice: the heads it needs

    int32_t head(size_t node) const { return static_cast<int32_t>(choices[node].size()) - 1; }
    int32_t rank(size_t node) const { return choices[node].back(); }
};
SparseTree make_tree(std::vector<Choice> choices);

// accuracy[i][r]: the probability that the true token is head i's rank-r
// prediction (r < top_k), measured on held-out data.
using RankAccuracy = std::vector<std::vector<double>>;

// The probability that the node of `choice` is accepted, under MEDUSA's
// independence approximation: prod_j accuracy[j][r_{j+1}].
double acceptance_probability(const Choice& choice, const RankAccuracy& accuracy);
// The expected number of accepted drafts per step: the sum of the nodes'
// acceptance probabilities (siblings exclude each other, so this is the
// expected depth of the accepted path). A step emits one more token.
double expected_accepted_drafts(const std::vector<Choice>& choices, const RankAccuracy& accuracy);

// MEDUSA's greedy construction: start from the empty tree and repeatedly add,
// among the children of the tree so far (the pending token's children
// included), the one of highest acceptance probability, until `budget`
// nodes or until no candidate has a positive probability. Children go at most
// `max_depth` levels deep (<= the heads measured) and have ranks < top_k
// (the width of `accuracy`). Ties: the shorter, then the lexicographically
// smaller choice. Returns the choices in tree order.
std::vector<Choice> greedy_tree(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth);

// The greedy construction's choices in the order it added them: every
// prefix is a tree (a node comes after its parent) and the best tree of its
// size under the independence approximation.
std::vector<Choice> greedy_order(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth);

// What one decoding step with a tree of `nodes` nodes `depth` levels deep
// costs, relative to a step of plain decoding (drafting, verifying the
// pending token and the nodes, and the target's distributions).
using StepCost = std::function<double(int64_t nodes, int64_t depth)>;

struct CostedTree {
    std::vector<Choice> choices;   // in tree order
    double expected_tokens = 0.0;  // per step: accepted drafts + the target's token
    double step_cost = 0.0;        // StepCost of the tree
    double speedup() const { return step_cost > 0 ? expected_tokens / step_cost : 0.0; }
};

// The prefix of greedy_order (at most `budget` nodes) of the highest
// expected tokens per unit of cost: a larger tree accepts more but costs
// more to verify, so the tree MEDUSA's greedy picks by acceptance alone is
// cut where the predicted speedup peaks (at least one node, even when no
// tree beats plain decoding: speedup() < 1 says so).
CostedTree greedy_tree_per_cost(const RankAccuracy& accuracy, int64_t budget, int64_t max_depth, const StepCost& cost);

}  // namespace cadenza::medusa
