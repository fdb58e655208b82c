// One synthesis's decoding loop over the backbone, drafter and acceptor:
// the sequence so far, which of its tokens the backbone's cache holds, the
// target's last hidden state, and the sessions. Each step drafts a tree,
// evaluates the unevaluated tokens and the tree in one pass (or, for an
// acceptor that does not verify, the unevaluated tokens alone), lets the
// acceptor choose, and commits the accepted path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "decoding_stats.h"
#include "engine_stages.h"
#include "managed_tensor.h"

namespace cadenza {

// How the markers of a target with phone markers follow the text (ELLA-V's
// inference).
struct PhoneMarkerRule {
    std::vector<int32_t> phones;   // the text's phones as backbone ids, in order; empty: no rule
    int64_t max_phone_frames = 0;  // a phone that has lasted this many frames ends; 0: no limit
};

struct StepResult {
    std::vector<int32_t> emitted;  // tokens to append, in order
    int32_t accepted_drafts = 0;   // accepted drafts among them (verifying acceptors)
    int32_t tree_depth = 0;        // depth of the drafted tree
};

class DecodingLoop {
public:
    // `sampling` is the pipeline's, restricted to the tokens a synthesis may
    // emit. Creates the sessions and evaluates all of `prompt` but its last
    // token, which roots the first step.
    // With guidance_scale != 1 a second backbone session decodes the same
    // tokens after the null text (text_dropout.h in training/), and every
    // row of logits becomes null + scale * (text - null).
    // With `markers.phones` (a backbone with phone markers), the markers
    // follow the text: the target decides where a phone ends (the mass of
    // all text ids), the text which phone comes next, so a phone is never
    // skipped or repeated; after the last one no marker is allowed. A phone
    // that reaches max_phone_frames is ended by force: the next marker, or
    // after the last phone the end token, is all that may come.
    DecodingLoop(EngineStages& stages, const cdz_sampling& sampling, double guidance_scale, DecodingStats& stats,
                 std::vector<int32_t> prompt, int64_t capacity, PhoneMarkerRule markers = {});

    // One step. The emitted tokens are appended to the sequence.
    StepResult step();

    // False when the acceptor emits drafts without a verification pass.
    bool verifies() const { return verifying_; }

private:
    // Evaluates sequence[evaluated_, end) as a chain with `draft` hanging
    // from its last token; with `want_logits`, keeps the logits from that
    // last token on (the backbone computes no others).
    void evaluate(size_t end, const cdz_token_tree* draft, bool want_logits);
    // The null-text session evaluates the same tree; with logits, they are
    // folded into logits_.
    void guide(const cdz_token_tree& tree, bool want_logits);
    // Gives each row's text-id mass to the next phone of its path, masks the
    // rest, and ends phones that have lasted too long.
    void constrain_markers(const cdz_token_tree* draft);
    // Commits the evaluated chain and the draft nodes of `accepted` (node
    // indices into the draft) and keeps the hidden state of the last one.
    void commit(size_t chain, const int32_t* accepted, int32_t accepted_count);
    // Asks the drafter for a tree; null when there is no drafter or no tree.
    const cdz_token_tree* propose();
    // The sampling distribution of the first `rows` rows of logits_.
    const float* target_probabilities(size_t rows);
    void check_finite_rows(const float* rows, int64_t count) const;

    EngineStages& stages_;
    const cdz_backbone_vtable& backbone_;
    const cdz_sampling sampling_;
    DecodingStats& stats_;
    const bool verifying_;
    const bool want_hidden_;
    const int64_t vocab_;
    const double guidance_scale_;

    std::unique_ptr<PluginSession> session_, draft_session_, null_text_session_, accept_session_;
    std::vector<int32_t> sequence_;
    std::vector<int32_t> null_text_prompt_;  // the prompt with its text nulled, when guiding
    const PhoneMarkerRule markers_;
    size_t markers_emitted_ = 0;
    int64_t frames_since_marker_ = 0;  // audio frames emitted since the last marker
    size_t evaluated_ = 0;       // tokens of sequence_ in the backbone's cache
    size_t pending_ = 0;         // tokens of the last evaluation before its draft
    std::vector<int32_t> pass_tokens_, pass_parents_;  // the last evaluation's tree
    ManagedTensor logits_tensor_, hidden_tensor_;      // the last evaluation's outputs
    float* logits_ = nullptr;  // [1 + draft nodes, vocab] in logits_tensor_, from the chain's last token
    const float* evaluated_hidden_ = nullptr;  // [rows, hidden] in hidden_tensor_
    std::vector<float> target_;  // target_probabilities' rows
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
