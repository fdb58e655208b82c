// draft.medusa: MEDUSA heads on the target's last hidden state proposing a
// sparse candidate tree (Cai et al., ICML 2024), as VADUSA uses them for
// speech (Li et al., ICASSP 2025: residual linear + SiLU heads, top-k = 10,
// a sparse tree of 64 nodes built greedily from calibration statistics).
//
// The heads are those of draft.mtp (drafts/common/hidden_state_heads.h): head i on
// the hidden state at position t predicts the token at t + 2 + i. The
// drafter runs in verifying mode only: the hidden state is the one at
// token_count - 2, which predicted the pending last token, so head 0's
// candidates are the children of that token, head 1's their children, ...
//
// The tree comes from the choices file (medusa_tree.h): the node of choice
// (r_1, ..., r_d) has the r_d-th most likely token of head d - 1 (ranked by
// logit among the tokens the sampling settings allow, ties to the lower id)
// and the node of (r_1, ..., r_{d-1}) as parent. Nodes are in tree order
// (by depth, then lexicographically), so parents precede children. The
// probability row of a node is its head's distribution after
// host->sampling_probabilities; siblings share it. The tokens are not drawn
// from those rows (MEDUSA takes the top-k deterministically), which is what
// a rule that judges candidates by the target alone (exact at temperature 0,
// tolerance) needs.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "draft_support.h"
#include "hidden_state_heads.h"
#include "libtorch_boundary.h"
#include "medusa_tree.h"

namespace {

using cadenza::sdk::Error;
namespace sdk = cadenza::sdk;
namespace drafts = cadenza::drafts;
namespace medusa = cadenza::medusa;

constexpr const char* plugin_name = "draft.medusa";

const cdz_param_spec params[] = {
    {"heads", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the heads file (safetensors: heads.{i}.linear.weight/bias, metadata cadenza.kind/heads/hidden_size)"},
    {"target", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the target checkpoint, for its lm_head: a safetensors file, an index .json, or a directory"},
    {"choices", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the sparse tree: one choice of top-k ranks per line, e.g. 0,1 (cadenza build-tree writes it)"},
    {"top_k", CDZ_PARAM_INT, "10", 1, 1, 1000, nullptr, "candidates per head; every rank of the choices is below it"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "LibTorch intra-op threads (process-wide); 0: keep the process's setting (the backbone's)"},
    drafts::digit_sampling_param,
};

struct Drafter {
    std::unique_ptr<drafts::DraftHeads> heads;
    medusa::SparseTree tree;
    int64_t top_k = 10;
    std::vector<std::vector<int32_t>> nodes_of_head;  // [head]: its nodes, in order
    std::vector<int64_t> ranks_of_head;               // [head]: 1 + the largest rank it needs
    int64_t max_rank = 0;                             // the largest of them
};

struct Session {
    const Drafter* drafter;
    std::vector<int32_t> tokens;
    std::vector<int32_t> candidates;  // [head][rank]
    std::vector<float> best;          // the kept logits of one head's selection
    drafts::ProbabilityRows rows;
};

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return sdk::guarded([&] {
        const sdk::Params values(*args);
        auto d = std::make_unique<Drafter>();
        d->top_k = values.integer("top_k");
        const std::filesystem::path choices = values.string("choices");
        d->tree = medusa::make_tree(medusa::read_choices(choices, d->top_k));
        drafts::apply_threads(values.integer("threads"));
        c10::InferenceMode inference;
        d->heads = std::make_unique<drafts::DraftHeads>(values.string("heads"),
                                                        values.string("target"));
        d->heads->set_digit_sampling(drafts::digit_sampling_of(values));
        if (d->tree.depth > d->heads->count())
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        choices.string() + ": the tree is " + std::to_string(d->tree.depth) +
                            " levels deep, but the heads file holds " + std::to_string(d->heads->count()) +
                            " heads (one per level)");
        const std::string& kind = d->heads->kind();
        if (kind != "medusa" && sdk::host().log_enabled(CDZ_LOG_WARN))
            sdk::host().log(CDZ_LOG_WARN, plugin_name,
                               ("the heads file says cadenza.kind = '" + kind +
                                "', not 'medusa'; the architecture is the same, so it is used as MEDUSA heads")
                                   .c_str());
        d->nodes_of_head.resize(static_cast<size_t>(d->tree.depth));
        d->ranks_of_head.assign(static_cast<size_t>(d->tree.depth), 0);
        for (size_t node = 0; node < d->tree.choices.size(); ++node) {
            const auto head = static_cast<size_t>(d->tree.head(node));
            d->nodes_of_head[head].push_back(static_cast<int32_t>(node));
            d->ranks_of_head[head] = std::max<int64_t>(d->ranks_of_head[head], d->tree.rank(node) + 1);
            d->max_rank = std::max(d->max_rank, d->ranks_of_head[head]);
        }
        *out_ctx = d.release();
    });
}

void destroy(void* ctx) { delete static_cast<Drafter*>(ctx); }

cdz_status* get_info(void* ctx, cdz_drafter_info* out) {
    return sdk::guarded([&] {
        const auto& d = *static_cast<const Drafter*>(ctx);
        out->max_nodes = static_cast<int32_t>(d.tree.choices.size());
        out->max_depth = d.tree.depth;
        out->needs_target_hidden = 1;
    });
}

cdz_status* session_create(void* ctx, int64_t, void** out_session) {
    return sdk::guarded([&] {
        const auto* d = static_cast<const Drafter*>(ctx);
        auto* session = new Session{d, {}, {}, {}, {}};
        session->tokens.resize(d->tree.choices.size());
        session->candidates.resize(static_cast<size_t>(d->tree.depth * d->top_k));
        *out_session = session;
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

// Keeps the `k` best of the tokens offered in increasing id order: by
// logit, ties to the lower id (an equal logit goes after the kept ones).
class TopTokens {
public:
    TopTokens(int64_t k, int32_t* out, float* best) : k_(k), out_(out), best_(best) {}
    void offer(const float* logits, int64_t t) {
        const float value = logits[t];
        if (kept_ == k_ && !(value > best_[k_ - 1])) return;
        int64_t at = kept_ < k_ ? kept_ : k_ - 1;
        for (; at > 0 && value > best_[at - 1]; --at) {
            best_[at] = best_[at - 1];
            out_[at] = out_[at - 1];
        }
        best_[at] = value;
        out_[at] = static_cast<int32_t>(t);
        if (kept_ < k_) ++kept_;
    }
    int64_t kept() const { return kept_; }

private:
    int64_t k_, kept_ = 0;
    int32_t* out_;
    float* best_;
};

// The `k` most likely tokens of `logits` into `out`: among `allowed` (the
// tokens the sampling settings allow), then (only when fewer than k are
// allowed) among the others. One pass over the allowed range.
void top_tokens(const float* logits, int64_t vocab, const drafts::TokenRange& allowed, int64_t k, int32_t* out,
                std::vector<float>& best) {
    best.resize(static_cast<size_t>(k));
    TopTokens top(k, out, best.data());
    if (allowed.extra >= 0 && allowed.extra < allowed.begin) top.offer(logits, allowed.extra);
    for (int64_t t = allowed.begin; t < allowed.end; ++t) top.offer(logits, t);
    if (allowed.extra >= allowed.end) top.offer(logits, allowed.extra);
    if (top.kept() < k) {
        const int64_t kept = top.kept();
        TopTokens rest(k - kept, out + kept, best.data() + kept);
        for (int64_t t = 0; t < vocab; ++t)
            if (!allowed.contains(t)) rest.offer(logits, t);
    }
}

cdz_status* propose(void* raw, const cdz_draft_input* in, cdz_draft_output* out) {
    return sdk::guarded([&] {
        auto& s = *static_cast<Session*>(raw);
        const Drafter& d = *s.drafter;
        const float* h = drafts::target_hidden(*in, d.heads->hidden_size());
        if (!h) {
            drafts::set_empty(out);
            return;
        }
        const int64_t n = in->token_count, p = in->target_hidden_position;
        if (p == n - 1)
            throw Error(CDZ_STATUS_UNSUPPORTED,
                        "proposes a tree for a verifying acceptor, but the acceptor does not verify (the hidden state "
                        "is at the last token); with acceptor.viterbi use draft.mtp");
        if (p != n - 2)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's hidden state is at position " + std::to_string(p) +
                                                         " of a sequence of " + std::to_string(n) + " tokens; expected " +
                                                         std::to_string(n - 2));
        if (!in->sampling) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the draft input has no sampling settings");
        c10::InferenceMode inference;
        const int64_t vocab = d.heads->vocab_size();
        // Only the allowed tokens' logits, unless the candidates need others too.
        const drafts::TokenRange allowed = drafts::allowed_tokens(in->sampling, vocab);
        const drafts::TokenRange computed = allowed.count() >= d.max_rank ? allowed : drafts::TokenRange{0, vocab, -1};
        drafts::DraftHeads::Step step = d.heads->step(h, false, d.tree.depth, computed);
        float* rows = s.rows.prepare(static_cast<int64_t>(d.tree.choices.size()), vocab);
        for (int32_t head = 0; head < d.tree.depth; ++head) {
            const float* head_logits = step.logits(head);
            int32_t* candidates = s.candidates.data() + static_cast<int64_t>(head) * d.top_k;
            top_tokens(head_logits, vocab, allowed, d.ranks_of_head[head], candidates, s.best);
            const auto& nodes = d.nodes_of_head[head];
            float* first = rows + static_cast<int64_t>(nodes.front()) * vocab;
            step.probabilities(head, in->sampling, first);
            for (size_t k = 0; k < nodes.size(); ++k) {
                if (k > 0) std::memcpy(rows + static_cast<int64_t>(nodes[k]) * vocab, first, sizeof(float) * vocab);
                s.tokens[nodes[k]] = candidates[d.tree.rank(nodes[k])];
            }
        }
        drafts::set_tree(out, s.tokens, d.tree.parents);
        out->probabilities = s.rows.lend();
    });
}

const cdz_drafter_vtable vtable = {
    sizeof(cdz_drafter_vtable), create, destroy, get_info, session_create, session_destroy, propose,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0",
    "MEDUSA heads on the target's last hidden state, proposing a sparse tree of top-k candidates",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return cadenza::sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, cadenza::torch_support::describe_exception);
}
