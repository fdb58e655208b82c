// What a decoding step with a MEDUSA tree costs on this machine, relative to
// a step of plain decoding, measured on the target and heads build-tree
// loaded: a target pass of n + 1 tokens after a typical context, the target's
// n + 1 sampling distributions, and one proposal of the heads (their logits
// and one distribution per level).
#pragma once

#include <cstdint>

#include "cadenza/plugin.h"
#include "hidden_state_heads.h"
#include "llama_model.h"
#include "medusa_tree.h"

namespace cadenza::training {

struct TreeStepCostOptions {
    int64_t max_nodes = 64;       // sizes 1 .. max_nodes + 1 are measured
    int64_t context = 256;        // committed tokens before the measured passes
    int repeats = 7;              // rounds; the fastest counts
    cdz_sampling sampling{};      // the distributions' settings
};

// Costs relative to plain decoding's step (one pass of one token and its
// distribution); the returned function reads them for a tree's size and depth.
medusa::StepCost measure_tree_step_cost(const llama::LlamaModel& model, const drafts::DraftHeads& heads,
                                        const TreeStepCostOptions& options);

}  // namespace cadenza::training
