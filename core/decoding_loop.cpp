#include "decoding_loop.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <utility>

#include <spdlog/spdlog.h>

#include "backbone_calls.h"
#include "error.h"
#include "sampling.h"
#include "status_object.h"
#include "token_tree.h"

namespace cadenza {
namespace {

void check_tree(const cdz_token_tree& tree, const std::string& drafter) {
    if (tree.node_count < 0 || (tree.node_count > 0 && (!tree.tokens || !tree.parents)))
        throw Error(CDZ_STATUS_INTERNAL, drafter + ": proposed a malformed token tree");
    if (tree.node_count > 0 && tree.tokens_per_node != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, drafter + ": multi-codebook trees are not supported by the engine yet");
    for (int32_t i = 0; i < tree.node_count; ++i)
        if (tree.parents[i] < -1 || tree.parents[i] >= i)
            throw Error(CDZ_STATUS_INTERNAL, drafter + ": tree node " + std::to_string(i) + " has parent " +
                                                 std::to_string(tree.parents[i]) +
                                                 " (parents must precede their children)");
}

}  // namespace

DecodingLoop::DecodingLoop(EngineStages& stages, const cdz_sampling& sampling, DecodingStats& stats,
                           std::vector<int32_t> prompt, int64_t capacity, bool draft_ahead)
    : stages_(stages),
      backbone_(stages.backbone->vtable<cdz_backbone_vtable>()),
      sampling_(sampling),
      stats_(stats),
      verifying_(!stages.acceptor || stages.acceptor_info.verifies),
      want_hidden_(stages.drafter && stages.drafter_info.needs_target_hidden),
      vocab_(stages.backbone_info.vocab_size),
      processors_(stages.logits_processors),
      sequence_(std::move(prompt)),
      draft_ahead_(draft_ahead && stages.drafter && verifying_) {
    session_ = create_session(*stages.backbone, backbone_.session_create, backbone_.session_destroy, capacity);
    processors_.start(sequence_, capacity);
    if (stages.drafter) {
        const auto& drafter = stages.drafter->vtable<cdz_drafter_vtable>();
        draft_session_ = create_session(*stages.drafter, drafter.session_create, drafter.session_destroy, capacity);
        const auto rows = static_cast<size_t>(std::max(stages.drafter_info.max_nodes, 0));
        proposal_.lent.resize(rows * static_cast<size_t>(vocab_));
        if (draft_ahead_) {
            ahead_.lent.resize(proposal_.lent.size());
            ahead_thread_ = std::make_unique<DraftAheadThread>();
        }
    }
    if (stages.acceptor) {
        const auto& acceptor = stages.acceptor->vtable<cdz_acceptor_vtable>();
        if (acceptor.session_create) {
            const std::string& name = stages.acceptor->name();
            if (!acceptor.session_destroy || !acceptor.session_reset || !acceptor.session_accept ||
                !acceptor.session_commit)
                throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                            name + ": has session_create but not all of session_destroy, session_reset, "
                                   "session_accept and session_commit");
            void* session = nullptr;
            throw_if_error(acceptor.session_create(stages.acceptor->context(), &session), name + ": session_create");
            accept_session_ = std::make_unique<PluginSession>(session, acceptor.session_destroy);
            throw_if_error(acceptor.session_reset(session, sequence_.data(), static_cast<int64_t>(sequence_.size())),
                           name + ": session_reset");
        }
    }
    if (spdlog::should_log(spdlog::level::trace)) {
        std::string tokens;
        for (int32_t token : sequence_) tokens += std::to_string(token) + " ";
        spdlog::trace("prompt ({} tokens): {}", sequence_.size(), tokens);
    }
    if (sequence_.size() > 1) {
        {
            ScopedTimer timer(stats_.prefill_seconds);
            evaluate(sequence_.size() - 1, nullptr, false);
        }
        commit(pending_, nullptr, 0);
    }
}

void DecodingLoop::evaluate(size_t end, const cdz_token_tree* draft, bool want_logits) {
    pending_ = end - evaluated_;
    const int32_t chain = static_cast<int32_t>(pending_);
    const int32_t draft_nodes = draft ? draft->node_count : 0;
    pass_tokens_.assign(sequence_.begin() + static_cast<std::ptrdiff_t>(evaluated_),
                        sequence_.begin() + static_cast<std::ptrdiff_t>(end));
    pass_parents_.resize(pending_);
    std::iota(pass_parents_.begin(), pass_parents_.end(), -1);
    for (int32_t i = 0; i < draft_nodes; ++i) {
        pass_tokens_.push_back(draft->tokens[i]);
        pass_parents_.push_back(draft->parents[i] < 0 ? chain - 1 : draft->parents[i] + chain);
    }
    cdz_token_tree tree{sizeof(cdz_token_tree), static_cast<int32_t>(pass_tokens_.size()), 1, pass_tokens_.data(),
                        pass_parents_.data()};
    cdz_backbone_output output{};
    output.struct_size = sizeof(output);
    output.logits_from = want_logits ? chain - 1 : tree.node_count;
    const std::string& name = stages_.backbone->name();
    logits_ = nullptr;
    logits_tensor_.reset();
    hidden_tensor_.reset();
    {
        ScopedTimer timer(stats_.verify_seconds);
        throw_if_error(backbone_.session_forward(session_->get(), &tree, want_hidden_ ? 1 : 0, &output),
                       name + ": forward");
        stats_.add_target_pass();
    }
    logits_tensor_ = ManagedTensor(output.logits);
    hidden_tensor_ = ManagedTensor(output.hidden);
    if (want_logits) logits_ = logits_from(logits_tensor_, tree.node_count, chain - 1, vocab_, name + ": logits");
    if (!processors_.empty()) {
        {
            ScopedTimer timer(stats_.verify_seconds);  // their own passes on the tree
            processors_.evaluate(tree, chain, want_logits);
        }
        if (want_logits) processors_.apply(logits_, vocab_, draft);
    }
    if (want_hidden_) {
        const auto hidden_shape = hidden_tensor_.expect(kDLFloat, 32, 2, name + ": hidden states");
        if (hidden_shape[0] != tree.node_count || hidden_shape[1] != stages_.backbone_info.hidden_size)
            throw Error(CDZ_STATUS_INTERNAL, name + ": hidden states have the wrong shape");
        evaluated_hidden_ = hidden_tensor_.data<float>();
    }
}

void DecodingLoop::commit(size_t chain, const int32_t* accepted, int32_t accepted_count) {
    path_.resize(chain);
    std::iota(path_.begin(), path_.end(), 0);
    for (int32_t k = 0; k < accepted_count; ++k) path_.push_back(static_cast<int32_t>(chain) + accepted[k]);
    const auto count = static_cast<int32_t>(path_.size());
    throw_if_error(backbone_.session_commit(session_->get(), path_.data(), count), stages_.backbone->name() + ": commit");
    processors_.commit(path_.data(), count);
    evaluated_ += path_.size();
    if (want_hidden_) {
        const size_t width = static_cast<size_t>(stages_.backbone_info.hidden_size);
        const float* row = evaluated_hidden_ + static_cast<size_t>(path_.back()) * width;
        hidden_.assign(row, row + width);
        hidden_position_ = static_cast<int64_t>(evaluated_) - 1;
    }
}

const cdz_token_tree* DecodingLoop::propose() {
    draft_rows_ = nullptr;
    if (!stages_.drafter) return nullptr;
    const auto count = static_cast<int64_t>(sequence_.size());
    double seconds = 0.0;
    ManagedTensor target_keys, target_values;  // the target's cache, for the first proposal (reads_target_cache)
    if (!proposed_ && reads_target_cache(count)) {
        ScopedTimer timer(seconds);
        throw_if_error(backbone_.session_read_cache(session_->get(), count - 1, target_keys.out(), target_values.out()),
                       stages_.backbone->name() + ": read_cache");
    }
    seconds += call_drafter(sequence_.data(), count, !draft_ahead_, proposal_,
                            target_keys.get() ? &target_keys.dl() : nullptr,
                            target_values.get() ? &target_values.dl() : nullptr);
    stats_.draft_seconds += seconds;
    stats_.add_draft_pass();
    if (!proposed_) stats_.add_first_draft_pass(seconds);  // the session's first proposal
    proposed_ = true;
    return take_proposal();
}

double DecodingLoop::call_drafter(const int32_t* tokens, int64_t count, bool account, Proposal& proposal,
                                  const DLTensor* target_keys, const DLTensor* target_values) {
    proposal.probabilities.reset();
    const auto& drafter = stages_.drafter->vtable<cdz_drafter_vtable>();
    TensorView hidden_view(hidden_.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(hidden_.size())});
    cdz_draft_input input{};
    input.struct_size = sizeof(input);
    input.tokens = tokens;
    input.token_count = count;
    const bool have_hidden = want_hidden_ && hidden_position_ >= 0;
    input.target_hidden = have_hidden ? hidden_view.get() : nullptr;
    input.target_hidden_position = have_hidden ? hidden_position_ : -1;
    input.sampling = &sampling_;
    input.target_keys = target_keys;
    input.target_values = target_values;
    if (account) {
        input.previous_token_count = previous_token_count_;
        input.accepted_count = static_cast<int32_t>(previous_accepted_.size());
        input.accepted_nodes = previous_accepted_.empty() ? nullptr : previous_accepted_.data();
    }
    cdz_draft_output& out = proposal.output;
    out = cdz_draft_output{};
    out.struct_size = sizeof(out);
    if (!proposal.lent.empty()) {
        out.lent_probabilities = proposal.lent.data();
        out.lent_rows = stages_.drafter_info.max_nodes;
        out.lent_row_size = vocab_;
    }
    double seconds = 0.0;
    {
        ScopedTimer timer(seconds);
        throw_if_error(drafter.propose(draft_session_->get(), &input, &out), stages_.drafter->name() + ": propose");
    }
    if (account) {
        previous_token_count_ = count;
        previous_accepted_.clear();
    }
    proposal.probabilities = ManagedTensor(out.probabilities);
    return seconds;
}

// A drafter of the target's own shape starts its cache from the target's
// instead of evaluating the prompt again (plugin ABI 1.2): its first
// proposal after the prefill, when all but the last token are committed.
bool DecodingLoop::reads_target_cache(int64_t token_count) const {
    return stages_.drafter_info.reads_target_cache && backbone_.session_read_cache && token_count > 1 &&
           evaluated_ == static_cast<size_t>(token_count - 1);
}

const cdz_token_tree* DecodingLoop::take_proposal() {
    const cdz_draft_output& out = proposal_.output;
    const std::string& name = stages_.drafter->name();
    check_tree(out.tree, name);
    draft_rows_ = nullptr;
    if (out.wrote_lent_probabilities) {
        if (proposal_.probabilities)
            throw Error(CDZ_STATUS_INTERNAL, name + ": returned probabilities and also wrote the lent buffer");
        if (out.tree.node_count > out.lent_rows)
            throw Error(CDZ_STATUS_INTERNAL, name + ": wrote " + std::to_string(out.tree.node_count) +
                                                 " rows of probabilities into a lent buffer of " +
                                                 std::to_string(out.lent_rows));
        draft_rows_ = proposal_.lent.data();
    } else if (proposal_.probabilities) {
        // Acceptors index these rows by the backbone's vocabulary.
        const auto shape = proposal_.probabilities.expect(kDLFloat, 32, 2, name + ": probabilities");
        if (shape[0] < out.tree.node_count || shape[1] != vocab_)
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        name + ": draft probabilities are [" + std::to_string(shape[0]) + ", " +
                            std::to_string(shape[1]) + "] but the tree has " + std::to_string(out.tree.node_count) +
                            " nodes over the backbone's " + std::to_string(vocab_) + " tokens (do draft and target agree?)");
        draft_rows_ = proposal_.probabilities.data<float>();
    }
    if (draft_rows_) check_finite_rows(draft_rows_, out.tree.node_count);
    return out.tree.node_count > 0 ? &out.tree : nullptr;
}

const cdz_token_tree* DecodingLoop::start_draft_ahead(const cdz_token_tree& tree) {
    const auto nodes = static_cast<size_t>(tree.node_count);
    held_tokens_.assign(tree.tokens, tree.tokens + nodes);
    held_parents_.assign(tree.parents, tree.parents + nodes);
    held_tree_ = cdz_token_tree{sizeof(cdz_token_tree), tree.node_count, 1, held_tokens_.data(), held_parents_.data()};
    if (draft_rows_ && draft_rows_ != proposal_.lent.data()) {  // the drafter's tensor: its next proposal may reuse it
        held_rows_.assign(draft_rows_, draft_rows_ + nodes * static_cast<size_t>(vocab_));
        draft_rows_ = held_rows_.data();
        proposal_.probabilities.reset();
    }
    ahead_tokens_.assign(sequence_.begin(), sequence_.end());
    ahead_tokens_.insert(ahead_tokens_.end(), held_tokens_.begin(), held_tokens_.end());
    ahead_thread_->start([this] {
        ahead_seconds_ = call_drafter(ahead_tokens_.data(), static_cast<int64_t>(ahead_tokens_.size()), false, ahead_);
    });
    return &held_tree_;
}

// The processors rule the rows an unverifying acceptor chooses from, in a
// buffer of the loop's own (the drafter's tensor is its to keep).
void DecodingLoop::rule_unverified_rows(int32_t rows) {
    float* writable = proposal_.lent.data();
    if (draft_rows_ != writable) {
        const size_t size = static_cast<size_t>(rows) * static_cast<size_t>(vocab_);
        if (proposal_.lent.size() < size) proposal_.lent.resize(size);
        writable = proposal_.lent.data();
        std::copy(draft_rows_, draft_rows_ + size, writable);
    }
    processors_.apply_unverified(writable, rows, vocab_, stages_.sampling_rng);
    draft_rows_ = writable;
}

// A NaN or infinite draft probability makes every acceptance test false (or
// true) without a word: an error naming the drafter instead. The exponent
// bits are tested as integers, which the compiler vectorizes (a float sum
// would be one dependent add per entry: ~8 us per row of 8,252).
void DecodingLoop::check_finite_rows(const float* rows, int64_t count) const {
    constexpr uint32_t exponent = 0x7f800000u;
    for (int64_t r = 0; r < count; ++r) {
        const float* row = rows + r * vocab_;
        uint32_t non_finite = 0;
        for (int64_t i = 0; i < vocab_; ++i) {
            uint32_t bits;
            std::memcpy(&bits, row + i, sizeof(bits));
            non_finite |= static_cast<uint32_t>((bits & exponent) == exponent);
        }
        if (non_finite)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, stages_.drafter->name() + ": the draft probabilities of node " +
                                                         std::to_string(r) + " are not finite numbers (NaN or infinity)");
    }
}

const float* DecodingLoop::target_probabilities(size_t rows) {
    prepare_target_rows(rows);
    for (size_t r = 0; r < rows; ++r) target_row(r);
    return target_.data();
}

void DecodingLoop::prepare_target_rows(size_t rows) {
    target_.resize(rows * vocab_);
    target_ready_.assign(rows, 0);
}

const float* DecodingLoop::target_row(size_t row) {
    if (row >= target_ready_.size())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, stages_.acceptor->name() + ": asked for target row " +
                                                     std::to_string(row) + " of a step with " +
                                                     std::to_string(target_ready_.size()) + " rows");
    float* out = target_.data() + row * vocab_;
    if (!target_ready_[row]) {
        try {
            sampling_probabilities(sampling_, logits_ + row * vocab_, out, vocab_);
        } catch (const Error& e) {  // NaN logits: say whose
            throw Error(e.code(), stages_.backbone->name() + ": " + e.what());
        }
        target_ready_[row] = 1;
    }
    return out;
}

int32_t DecodingLoop::sample_target_token() {
    target_.resize(vocab_);
    try {
        return static_cast<int32_t>(sample_token(sampling_, logits_, target_.data(), vocab_, stages_.sampling_rng));
    } catch (const Error& e) {  // NaN logits: say whose
        throw Error(e.code(), stages_.backbone->name() + ": " + e.what());
    }
}

std::vector<int32_t> DecodingLoop::audio_tokens(const std::vector<int32_t>& emitted, const int32_t* named) const {
    std::vector<int32_t> audio;
    if (!verifying_) return audio;  // the processors may have rewritten what an unverified acceptor emitted
    const cdz_backbone_info& info = stages_.backbone_info;
    for (size_t k = 0; k < emitted.size(); ++k) {
        const int32_t heard = named[k];
        if (heard < 0 || heard == emitted[k]) continue;
        if (!is_audio_token(info, emitted[k]) || !is_audio_token(info, heard))
            throw Error(CDZ_STATUS_INTERNAL, stages_.acceptor->name() + " gave audio token " + std::to_string(heard) +
                                                 " for emitted token " + std::to_string(emitted[k]) +
                                                 ": only an audio code may stand for another");
        if (audio.empty()) audio = emitted;
        audio[k] = heard;
    }
    return audio;
}

const float* DecodingLoop::lend_target_row(void* loop, int32_t row) noexcept {
    auto& self = *static_cast<DecodingLoop*>(loop);
    try {
        if (row < 0)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        self.stages_.acceptor->name() + ": asked for target row " + std::to_string(row));
        return self.target_row(static_cast<size_t>(row));
    } catch (...) {
        if (!self.target_row_failure_) self.target_row_failure_ = std::current_exception();
        return nullptr;
    }
}

StepResult DecodingLoop::step() {
    const cdz_token_tree* tree = nullptr;
    const float* target = nullptr;
    const bool rows_on_demand = verifying_ && stages_.acceptor && stages_.acceptor_info.reads_target_rows;
    if (verifying_) {
        if (ahead_ready_) {  // the continuation the last step drafted beside its pass
            if (ahead_tokens_ != sequence_)
                throw Error(CDZ_STATUS_INTERNAL, "the continuation drafted ahead follows another sequence");
            std::swap(proposal_, ahead_);
            ahead_ready_ = false;
            tree = take_proposal();
            stats_.add_continued_step();
        } else {
            tree = propose();
        }
        if (draft_ahead_ && tree && token_tree_depth(*tree) == tree->node_count) tree = start_draft_ahead(*tree);
        evaluate(sequence_.size(), tree, true);
        const size_t rows = 1 + static_cast<size_t>(tree ? tree->node_count : 0);
        if (rows_on_demand)
            prepare_target_rows(rows);
        else if (stages_.acceptor)
            target = target_probabilities(rows);
    } else {
        // The unevaluated tokens first, so the drafter sees the hidden state
        // after them; what the acceptor emits is not verified.
        evaluate(sequence_.size(), nullptr, false);
        commit(pending_, nullptr, 0);
        tree = propose();
        if (tree && draft_rows_ && !processors_.empty()) rule_unverified_rows(tree->node_count);
    }

    const int32_t nodes = tree ? tree->node_count : 0;
    accepted_nodes_.assign(static_cast<size_t>(nodes) + 1, -1);
    emitted_.assign(2 * (static_cast<size_t>(nodes) + 1), -1);
    cdz_accept_output result{};
    result.struct_size = sizeof(result);
    result.accepted_nodes = accepted_nodes_.data();
    result.accepted_capacity = static_cast<int32_t>(accepted_nodes_.size());
    result.emitted_tokens = emitted_.data();
    result.emitted_capacity = nodes + 1;
    result.audio_tokens = emitted_.data() + nodes + 1;
    {
        ScopedTimer timer(stats_.accept_seconds);
        if (stages_.acceptor) {
            static const cdz_token_tree empty_tree{sizeof(cdz_token_tree), 0, 1, nullptr, nullptr};
            cdz_accept_input input{};
            input.struct_size = sizeof(input);
            input.tree = tree ? tree : &empty_tree;
            input.vocab_size = vocab_;
            input.target_probabilities = target;
            input.draft_probabilities = draft_rows_;
            input.sampling = &sampling_;
            input.sequence = sequence_.data();
            input.sequence_length = static_cast<int64_t>(sequence_.size());
            if (rows_on_demand) {
                input.target_row = lend_target_row;
                input.target_row_ctx = this;
            }
            const auto& acceptor = stages_.acceptor->vtable<cdz_acceptor_vtable>();
            cdz_status* status = accept_session_ ? acceptor.session_accept(accept_session_->get(), &input, &result)
                                                 : acceptor.accept(stages_.acceptor->context(), &input, &result);
            if (target_row_failure_) {  // the host's reason, not the acceptor's report of it
                status_release(status);
                std::rethrow_exception(std::exchange(target_row_failure_, nullptr));
            }
            throw_if_error(status, stages_.acceptor->name() + (accept_session_ ? ": session_accept" : ": accept"));
        } else {
            emitted_[0] = sample_target_token();
            result.emitted_count = 1;
        }
    }
    if (result.accepted_count < 0 || result.accepted_count > nodes || result.emitted_count < 1 ||
        result.emitted_count > nodes + 1 || (!verifying_ && result.accepted_count != 0))
        throw Error(CDZ_STATUS_INTERNAL, "acceptor returned an invalid result");
    // The continuation drafted beside the pass is used when the whole chain
    // was accepted: the bonus token is left out and the chain's last token
    // stays unevaluated, rooting the continuation in the next step's pass.
    bool continues = false;
    if (ahead_thread_ && ahead_thread_->started()) {
        stats_.draft_seconds += ahead_thread_->wait();
        stats_.draft_ahead_seconds += ahead_seconds_;
        stats_.add_draft_pass();
        continues = nodes > 0 && result.accepted_count == nodes && result.emitted_count == nodes + 1 &&
                    ahead_.output.tree.node_count > 0;
        if (continues)
            result.emitted_count = nodes;
        else
            ahead_.probabilities.reset();  // the drafter's block, free for its next proposal
    }
    if (!verifying_ && !processors_.empty())
        result.emitted_count = static_cast<int32_t>(
            processors_.rewrite_unverified(emitted_.data(), static_cast<size_t>(result.emitted_count)));

    if (verifying_) {
        int32_t expected_parent = -1;
        for (int32_t k = 0; k < result.accepted_count; ++k) {
            const int32_t node = accepted_nodes_[k];
            if (node < 0 || node >= nodes || tree->parents[node] != expected_parent)
                throw Error(CDZ_STATUS_INTERNAL, "acceptor returned a path that is not a root-to-leaf path");
            if (emitted_[k] != tree->tokens[node])
                throw Error(CDZ_STATUS_INTERNAL, "acceptor emitted a token that differs from its accepted node");
            expected_parent = node;
        }
        commit(pending_, accepted_nodes_.data(), result.accepted_count - (continues ? 1 : 0));
        if (tree) previous_accepted_.assign(accepted_nodes_.begin(), accepted_nodes_.begin() + result.accepted_count);
    }

    StepResult step;
    step.emitted.assign(emitted_.begin(), emitted_.begin() + result.emitted_count);
    step.audio = audio_tokens(step.emitted, result.audio_tokens);
    step.accepted_drafts = result.accepted_count;
    step.tree_depth = tree ? token_tree_depth(*tree) : 0;
    step.tree_nodes = nodes;
    sequence_.insert(sequence_.end(), step.emitted.begin(), step.emitted.end());
    if (accept_session_)
        throw_if_error(stages_.acceptor->vtable<cdz_acceptor_vtable>().session_commit(
                           accept_session_->get(), step.emitted.data(), static_cast<int64_t>(step.emitted.size())),
                       stages_.acceptor->name() + ": session_commit");
    processors_.append(step.emitted.data(), step.emitted.size());
    ahead_ready_ = continues;
    if (spdlog::should_log(spdlog::level::trace)) {
        std::string drafted, kept;
        for (int32_t i = 0; i < nodes; ++i)
            drafted += std::to_string(tree->tokens[i]) + "<" + std::to_string(tree->parents[i]) + " ";
        for (int32_t token : step.emitted) kept += std::to_string(token) + " ";
        spdlog::trace("step {}: drafted [{}] accepted {} emitted [{}]", stats_.steps(), drafted, result.accepted_count,
                      kept);
    }
    return step;
}

}  // namespace cadenza
