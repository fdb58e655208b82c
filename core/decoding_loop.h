// One synthesis's decoding loop over the backbone, drafter and acceptor:
// the sequence so far, which of its tokens the backbone's cache holds, the
// target's last hidden state, and the sessions. Each step drafts a tree,
// evaluates the unevaluated tokens and the tree in one pass (or, for an
// acceptor that does not verify, the unevaluated tokens alone), passes the
// logits through the pipeline's logits processors, lets the acceptor
// choose, and commits the accepted path.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "decoding_stats.h"
#include "engine_stages.h"
#include "logits_processor.h"
#include "managed_tensor.h"

namespace cadenza {

struct StepResult {
    std::vector<int32_t> emitted;  // tokens to append, in order
    int32_t accepted_drafts = 0;   // accepted drafts among them (verifying acceptors)
    int32_t tree_depth = 0;        // depth of the drafted tree
    int32_t tree_nodes = 0;        // its nodes
};

class DecodingLoop {
public:
    // `sampling` is the pipeline's, restricted to the tokens a synthesis may
    // emit. Creates the sessions, starts the stages' logits processors and
    // evaluates all of `prompt` but its last token, which roots the first
    // step.
    DecodingLoop(EngineStages& stages, const cdz_sampling& sampling, DecodingStats& stats, std::vector<int32_t> prompt,
                 int64_t capacity);

    // One step. The emitted tokens are appended to the sequence.
    StepResult step();

    // The prompt and every token emitted so far.
    const std::vector<int32_t>& sequence() const { return sequence_; }

    // False when the acceptor emits drafts without a verification pass.
    bool verifies() const { return verifying_; }

private:
    // Evaluates sequence[evaluated_, end) as a chain with `draft` hanging
    // from its last token; with `want_logits`, keeps the logits from that
    // last token on (the backbone computes no others), processed.
    void evaluate(size_t end, const cdz_token_tree* draft, bool want_logits);
    // Commits the evaluated chain and the draft nodes of `accepted` (node
    // indices into the draft) and keeps the hidden state of the last one.
    void commit(size_t chain, const int32_t* accepted, int32_t accepted_count);
    // Asks the drafter for a tree; null when there is no drafter or no tree.
    const cdz_token_tree* propose();
    // The sampling distribution of the first `rows` rows of logits_, all of them.
    const float* target_probabilities(size_t rows);
    // The same rows, each computed when first asked for (an acceptor that
    // reads them through cdz_accept_input.target_row): prepare, then row by row.
    void prepare_target_rows(size_t rows);
    const float* target_row(size_t row);
    // Without an acceptor: the token drawn from row 0's distribution, as
    // sample_index would from target_probabilities(1), reading only its nucleus.
    int32_t sample_target_token();
    // cdz_accept_input.target_row: NULL when the row cannot be computed, the
    // reason kept in target_row_failure_ (exceptions stay on this side).
    static const float* lend_target_row(void* loop, int32_t row) noexcept;
    void check_finite_rows(const float* rows, int64_t count) const;
    // An acceptor that does not verify: the logits processors rewrite the
    // draft's first `rows` distributions (apply_unverified).
    void rule_unverified_rows(int32_t rows);

    EngineStages& stages_;
    const cdz_backbone_vtable& backbone_;
    const cdz_sampling sampling_;
    DecodingStats& stats_;
    const bool verifying_;
    const bool want_hidden_;
    const int64_t vocab_;
    LogitsProcessorChain& processors_;

    std::unique_ptr<PluginSession> session_, draft_session_, accept_session_;
    std::vector<int32_t> sequence_;
    size_t evaluated_ = 0;       // tokens of sequence_ in the backbone's cache
    size_t pending_ = 0;         // tokens of the last evaluation before its draft
    std::vector<int32_t> pass_tokens_, pass_parents_;  // the last evaluation's tree
    std::vector<int32_t> path_;                        // the nodes of it committed
    ManagedTensor logits_tensor_, hidden_tensor_;      // the last evaluation's outputs
    float* logits_ = nullptr;  // [1 + draft nodes, vocab] in logits_tensor_, from the chain's last token
    const float* evaluated_hidden_ = nullptr;  // [rows, hidden] in hidden_tensor_
    std::vector<float> target_;  // target_probabilities' rows
    std::vector<uint8_t> target_ready_;  // target_row: which rows of target_ are computed
    std::exception_ptr target_row_failure_;
    std::vector<float> hidden_;  // the target's hidden state at hidden_position_
    int64_t hidden_position_ = -1;

    cdz_draft_output draft_{};
    ManagedTensor draft_probabilities_;      // when the drafter returned its own tensor
    std::vector<float> lent_probabilities_;  // [max_nodes, vocab], lent to the drafter at every proposal
    const float* draft_rows_ = nullptr;      // the last proposal's distributions, in either
    int64_t previous_token_count_ = 0;       // the sequence's length at the last proposal
    std::vector<int32_t> previous_accepted_; // the last proposal's nodes the acceptor kept
    std::vector<int32_t> accepted_nodes_, emitted_;
};

}  // namespace cadenza
