// What the drafter plugins share beyond the SDK: the host's sampling
// services, the checked target hidden state, and the [nodes, vocab]
// probability buffer handed to the host without a fresh allocation (or
// zero-fill) per proposal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza::drafts {

// The `threads` parameter of a drafter: N > 0 sets LibTorch's intra-op
// threads to N (process-wide, like backbone.llama's `threads`); 0 keeps the
// count in force, so that a drafter created after the backbone does not undo
// the backbone's setting. Either way OpenBLAS is held to one thread of its
// own (cadenza::llama::apply_thread_policy).
void apply_threads(int64_t threads);

// host->sampling_probabilities, host->sampling_nucleus and host->sample_index,
// throwing on error.
void sampling_probabilities(const cdz_sampling* sampling, const float* logits, float* probabilities, int64_t count);
void sampling_nucleus(const cdz_sampling* sampling, float* probabilities, int64_t count);
int32_t sample_index(cdz_rng* rng, const float* probabilities, int64_t count);

// The tokens whose logits a distribution needs: [begin, end) and `extra`
// (-1: none), the sampling settings' allowed tokens. Logits outside them
// are never read by host->sampling_probabilities, so a drafter computes only
// these rows of its output head (a third of LLaSA's 193,800 for its 65,536
// audio codes and end token).
struct TokenRange {
    int64_t begin = 0, end = 0, extra = -1;
    int64_t count() const { return end - begin + (extra >= 0 ? 1 : 0); }
    bool contains(int64_t t) const { return (t >= begin && t < end) || t == extra; }
};
// The whole vocabulary when the settings restrict nothing (or restrict it
// in a way that does not fit `vocab`, which the host then reports).
TokenRange allowed_tokens(const cdz_sampling* sampling, int64_t vocab);

// The target's hidden state of a draft input as `hidden_size` floats, after
// checking its type and shape; NULL when the input carries none.
const float* target_hidden(const cdz_draft_input& in, int64_t hidden_size);

// A float32 [rows, vocab] tensor to fill and hand to the host as a
// DLManagedTensor. The block is reused from one proposal to the next when the
// host has released the previous one (the engine does, before each propose);
// otherwise a new one is made. A block lent to the host outlives the session
// if need be.
class ProbabilityRows {
public:
    // Room for rows x vocab floats; the contents are stale, the caller fills them.
    float* prepare(int64_t rows, int64_t vocab);
    // Lends the prepared block to the host, its first `rows` rows when a
    // proposal used fewer than prepared (-1: all); its deleter gives it back.
    DLManagedTensor* lend(int64_t rows = -1);

private:
    struct Block {
        DLManagedTensor managed{};
        std::vector<float> data;
        int64_t shape[2] = {0, 0};
        std::shared_ptr<Block> lent;  // set while the host holds it
    };
    std::shared_ptr<Block> block_;
};

// Fills the tree of a draft output with arrays the session owns.
void set_tree(cdz_draft_output* out, const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents);
// Hands the host a chain: the first `count` of `tokens` (node i's parent
// i - 1; `parents` is filled here) and the first `count` rows of `rows`.
void set_chain(cdz_draft_output* out, std::vector<int32_t>& tokens, std::vector<int32_t>& parents,
               ProbabilityRows& rows, int64_t count);
// An empty proposal (no node, no probabilities).
void set_empty(cdz_draft_output* out);

}  // namespace cadenza::drafts
