// One synthesis's decoding loop over the backbone, drafter and acceptor:
// the sequence so far, which of its tokens the backbone's cache holds, the
// target's last hidden state, and the sessions. Each step drafts a tree,
// evaluates the unevaluated tokens and the tree in one pass (or, for an
// acceptor that does not verify, the unevaluated tokens alone), passes the
// logits through the pipeline's logits processors, lets the acceptor
// choose, and commits the accepted path.
//
// With draft_ahead, a step that proposed a chain also asks the drafter, on a
// thread of its own and during the target's pass, for the chain that would
// follow it were all of it accepted. When all of it is, the step leaves out
// the target's bonus token and its last drafted token stays unevaluated, so
// that the next step's pass evaluates that token and the continuation: the
// continuation's first token is then judged against the same row the bonus
// was drawn from, and the output keeps the acceptor's distribution (a token
// the acceptor would have drawn is not drawn, and one it judges instead
// takes its place; which happens depends on the acceptance alone, never on
// timing). Otherwise the continuation is dropped and the next step proposes
// as usual. Proposals then give the drafter no account of earlier ones
// (cdz_draft_input.previous_token_count = 0).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "decoding_stats.h"
#include "draft_ahead_thread.h"
#include "engine_stages.h"
#include "logits_processor.h"
#include "managed_tensor.h"

namespace cadenza {

struct StepResult {
    std::vector<int32_t> emitted;  // tokens to append, in order
    std::vector<int32_t> audio;    // what the codec decodes for each; empty: the emitted tokens themselves
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
                 int64_t capacity, bool draft_ahead = false);

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
    // One proposal's output and the rows lent to the drafter for it.
    struct Proposal {
        cdz_draft_output output{};
        ManagedTensor probabilities;  // when the drafter returned its own tensor
        std::vector<float> lent;      // [max_nodes, vocab]
    };
    // Asks the drafter for a tree; null when there is no drafter or no tree.
    const cdz_token_tree* propose();
    // The drafter's proposal after tokens[0, count) into `proposal`, with an
    // account of the previous one when `account`; returns its seconds. Reads
    // nothing the loop changes during a step but previous_token_count_ and
    // previous_accepted_ (`account`), so that it can run beside the pass.
    // With `target_keys` and `target_values`, the target's cache of
    // tokens[0, count - 1) for a drafter that reads it (plugin ABI 1.2).
    double call_drafter(const int32_t* tokens, int64_t count, bool account, Proposal& proposal,
                        const DLTensor* target_keys = nullptr, const DLTensor* target_values = nullptr);
    // Checks proposal_ and points draft_rows_ at its rows; its tree or null.
    const cdz_token_tree* take_proposal();
    // Whether the drafter's first proposal for a sequence of `token_count`
    // starts from the target's cache (plugin ABI 1.2's reads_target_cache).
    bool reads_target_cache(int64_t token_count) const;
    // Copies the tree and rows of proposal_ that the drafter owns into the
    // loop's own (the next call reuses the drafter's) and starts the
    // continuation of `tree`, a chain, on ahead_thread_.
    const cdz_token_tree* start_draft_ahead(const cdz_token_tree& tree);
    // The sampling distribution of the first `rows` rows of logits_, all of them.
    const float* target_probabilities(size_t rows);
    // The same rows, each computed when first asked for (an acceptor that
    // reads them through cdz_accept_input.target_row): prepare, then row by row.
    void prepare_target_rows(size_t rows);
    const float* target_row(size_t row);
    // Without an acceptor: the token drawn from row 0's distribution, as
    // sample_index would from target_probabilities(1), reading only its nucleus.
    int32_t sample_target_token();
    // What the codec decodes for `emitted`: the acceptor's audio_tokens where
    // it wrote one (a verifying acceptor only), checked; the token elsewhere.
    // Empty when it wrote none.
    std::vector<int32_t> audio_tokens(const std::vector<int32_t>& emitted, const int32_t* named) const;
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

    Proposal proposal_;                      // the step's
    const float* draft_rows_ = nullptr;      // its distributions, in proposal_ or held_rows_
    bool proposed_ = false;                  // the session has proposed before
    int64_t previous_token_count_ = 0;       // the sequence's length at the last proposal
    std::vector<int32_t> previous_accepted_; // the last proposal's nodes the acceptor kept
    std::vector<int32_t> accepted_nodes_;
    // A step's emitted tokens, then as many entries for the acceptor's audio
    // tokens (cdz_accept_output.audio_tokens): one block, as before the audio
    // tokens existed, so the heap the step's passes allocate from is laid out
    // as it was (a block of its own made `default`'s pass 5-10% slower).
    std::vector<int32_t> emitted_;

    // draft_ahead: the continuation (ahead_, made from ahead_tokens_ in
    // ahead_seconds_), and the step's tree and rows held while it is made.
    const bool draft_ahead_;
    Proposal ahead_;
    std::vector<int32_t> ahead_tokens_;
    double ahead_seconds_ = 0.0;
    bool ahead_ready_ = false;  // the next step verifies ahead_
    std::vector<int32_t> held_tokens_, held_parents_;
    cdz_token_tree held_tree_{};
    std::vector<float> held_rows_;
    // Last: destroyed first, it waits for a running proposal, which uses the members above.
    std::unique_ptr<DraftAheadThread> ahead_thread_;
};

}  // namespace cadenza
