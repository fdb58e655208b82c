// How often each draft head's rank-r prediction is the true token, measured
// with the target over a token corpus (teacher forcing): the statistics of
// MEDUSA's greedy tree construction (`cadenza build-tree`).
#pragma once

#include <cstdint>
#include <vector>

#include "hidden_state_heads.h"
#include "llama_model.h"
#include "medusa_tree.h"

namespace cadenza::medusa {

// One calibration sequence (a line of the token corpus, docs/training.md).
struct CorpusSequence {
    std::vector<int32_t> tokens;  // the prompt then the target
    size_t prompt_length = 0;
};

struct HeadAccuracy {
    int64_t ranks = 0;                         // ranks counted (>= top_k and >= 5)
    std::vector<std::vector<int64_t>> hits;    // [head][rank]: positions whose true token had that rank
    std::vector<int64_t> positions;            // [head]: positions measured

    // P(rank < k) for head i.
    double top(size_t head, int64_t k) const;
    // accuracy[i][r] for r < top_k: the greedy construction's input.
    RankAccuracy rank_accuracy(int64_t top_k) const;
};

// Runs the target over each sequence (at most `max_positions` tokens of it)
// and, for head i and every hidden position t whose token t + 2 + i is a
// target token (not the prompt), ranks that token among head i's logits (by
// logit, ties to the lower id) over the whole vocabulary.
HeadAccuracy measure_head_accuracy(const llama::LlamaModel& target, const drafts::DraftHeads& heads,
                                   const std::vector<CorpusSequence>& corpus, int64_t ranks, int64_t max_positions);

}  // namespace cadenza::medusa
