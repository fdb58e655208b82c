// acceptor.viterbi: Viterbi-based speculative decoding over multi-token
// prediction heads (Nguyen et al., "Accelerating Codec-based Speech Synthesis
// with Multi-Token Prediction and Speculative Decoding", ICASSP 2025,
// Section III-C and Algorithm 1).
//
// How the engine drives it (verifies = 0): the backbone evaluates the
// pending tokens, the MTP drafter proposes a chain of n nodes (node i is head
// i's argmax, head i predicting the token i + 1 steps ahead) and sets
// draft_probabilities row i to head i's distribution S_{i+1} over the
// vocabulary. This acceptor picks n tokens with no target verification:
// accepted_count = 0 and the engine appends emitted_tokens as they are.
//
// The lattice. Head t (t = 1..n) contributes its top-k tokens. Let the m
// distinct tokens among them be a_1..a_m (m <= k n). The m x m submatrix of
// log Q (Q from the transitions file, Q(a, b) = P(next = b | current = a)) is
// computed once per call. The states of step t are
//   lattice = "per_head": head t's top-k tokens (k^n paths), or
//   lattice = "union":    all m tokens (m^n paths; a token another head
//                         proposed is scored by head t's own probability),
//                         the reduced state matrix of the paper's Fig. 2.
// Tokens a head gives probability 0 are never states of that step.
//
// The objective. Everything is in natural-log space, in double precision:
//   log S_t(a)  = log of draft_probabilities[t - 1][a]   (head t's emission)
//   log Q(a, b) = log of the transitions file's Q(a, b)  (the transition)
//   score(x_1..x_n) = log S_1(x_1) + sum_{t=2..n} [log Q(x_{t-1}, x_t) + log S_t(x_t)]
// which is Algorithm 1's product delta_T = S_1(x_1) prod_t Q(x_{t-1}, x_t) S_t(x_t)
// in logs. Algorithm 1 line 3 scores the first state by its emission alone;
// with prefix_transition (the default) it also gets the transition from the
// last committed token x_0, which the acceptor's session (or the input's
// sequence) knows: the paper's product then runs over every transition.
//   delta_1(j) = log S_1(a_j) [+ log Q(x_0, a_j)]
//   delta_t(j) = max_i [delta_{t-1}(i) + log Q(a_i, a_j)] + log S_t(a_j)
//   psi_t(j)   = argmax_i [delta_{t-1}(i) + log Q(a_i, a_j)]
// then the best final state and back-tracking through psi. Ties go to the
// earlier state in the step's list (per_head: the more probable token, then
// the lower id; union: the lower id).
//
// The first state. With sample_first (the default) the first token is drawn
// from head 1's top-k, renormalized: P(x_1 = a) = S_1(a) / sum_{b in top-k} S_1(b)
// ("top-k sampling ... to preserve diversity", Fig. 2), with prefix_transition
// S_1(a) Q(x_0, a) renormalized (S_1 alone if Q(x_0, .) is 0 on all), with the instance's
// random stream, so a seed reproduces a run bit for bit. Viterbi then runs
// with step 1 restricted to that state: x_2..x_n maximise the score given
// x_1. Without sample_first, x_1..x_n maximise the score jointly.
//
// If no path has a positive probability (only possible when Q holds exact
// zeros, e.g. a matrix built with alpha = 0), each step takes its most
// probable state instead (the heads' argmax; step 1 the sampled state).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "transition_matrix.h"

namespace cadenza::viterbi {
namespace {

constexpr const char* plugin_name = "acceptor.viterbi";
constexpr double negative_infinity = -std::numeric_limits<double>::infinity();

enum class Lattice { per_head, union_of_heads };

struct Candidate {
    int32_t token;
    float probability;
};

struct Viterbi {
    TransitionMatrix transitions;
    std::string transitions_path;
    int32_t top_k = 3;
    int32_t heads = 0;  // 0: all
    bool sample_first = true;
    bool prefix_transition = true;
    Lattice lattice = Lattice::per_head;
    cdz_rng* rng = nullptr;
    bool warned_of_unused_heads = false;

    // Scratch, kept between calls so that a step allocates nothing once the
    // buffers have grown to the largest (n, k) seen.
    std::vector<Candidate> candidates;    // [n * top_k]: head t's top-k, most probable first
    std::vector<int32_t> candidate_count; // [n]
    std::vector<int32_t> tokens;          // the m distinct tokens, ascending
    std::vector<double> log_q;            // [m * m]: log Q(tokens[a], tokens[b])
    std::vector<float> q_row;             // [m]
    std::vector<double> log_q_first;      // [m]: log Q(x_0, tokens[a]), the transition into step 1
    std::vector<int32_t> state_offset;    // [n + 1]: step t's states are [offset[t], offset[t + 1])
    std::vector<int32_t> state_token;     // index into `tokens`
    std::vector<double> state_emission;   // log S_t of the state's token
    std::vector<double> delta;            // per state
    std::vector<int32_t> back;            // per state: index of the best predecessor in step t - 1
    std::vector<float> first_weights;     // head 1's top-k renormalized, for sampling
    std::vector<int32_t> path;            // [n]: chosen state per step
};

const char* const lattice_choices[] = {"per_head", "union", nullptr};

const cdz_param_spec params[] = {
    {"transitions", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "token transition matrix Q written by `cadenza build-transitions` (docs/formats.md)"},
    {"top_k", CDZ_PARAM_INT, "3", 1, 1.0, 64.0, nullptr,
     "tokens each head contributes to the lattice (the paper's top_k; 3 is its best WER)"},
    {"heads", CDZ_PARAM_INT, "0", 1, 0.0, 64.0, nullptr,
     "use (and emit) at most this many heads per step; 0: every head the drafter gives"},
    {"sample_first", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "draw the first token from head 1's renormalized top-k (diversity); false: joint Viterbi argmax"},
    {"lattice", CDZ_PARAM_STRING, "\"per_head\"", 0, 0.0, 0.0, lattice_choices,
     "states of step t: \"per_head\" = head t's top-k; \"union\" = the m distinct tokens of all heads' top-k"},
    {"prefix_transition", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "score the first token with the transition from the last committed one; false: Algorithm 1 as printed"},
};

Viterbi& viterbi_of(void* ctx) {
    if (!ctx) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the acceptor instance is NULL");
    return *static_cast<Viterbi*>(ctx);
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) noexcept {
    return sdk::guarded([&] {
        if (!args || !out_ctx || !args->params) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "args or out_ctx is NULL");
        *out_ctx = nullptr;
        const sdk::Params params(*args);
        auto viterbi = std::make_unique<Viterbi>();
        viterbi->transitions_path = params.string("transitions");
        const int64_t top_k = params.integer("top_k");
        const int64_t heads = params.integer("heads");
        viterbi->sample_first = params.boolean("sample_first");
        viterbi->prefix_transition = params.boolean("prefix_transition");
        viterbi->lattice = params.string("lattice") == "union" ? Lattice::union_of_heads : Lattice::per_head;
        viterbi->transitions = TransitionMatrix::load(viterbi->transitions_path);
        viterbi->top_k = static_cast<int32_t>(top_k);
        viterbi->heads = static_cast<int32_t>(heads);
        viterbi->rng = args->rng;
        if (viterbi->sample_first && !viterbi->rng)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "sample_first needs a random stream, and args->rng is NULL");
        *out_ctx = viterbi.release();
    });
}

void destroy(void* ctx) noexcept { delete static_cast<Viterbi*>(ctx); }

cdz_status* get_info(void* ctx, cdz_acceptor_info* out) noexcept {
    return sdk::guarded([&] {
        viterbi_of(ctx);
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out is NULL");
        out->verifies = 0;               // emits without a verification pass
        out->needs_draft_probabilities = 1;  // the heads' distributions S_t
    });
}

// The k most probable tokens of `row` with a positive probability, most
// probable first, ties to the lower id. Returns how many (<= k). Two passes:
// a branch-free validity check (vectorized), then one scan that only
// branches for a value above the current k-th, inserting it into a sorted
// list of at most k (k <= 64).
int32_t select_top_k(const float* row, int64_t vocab, int32_t k, Candidate* out, int32_t head) {
    int invalid = 0;
    for (int64_t token = 0; token < vocab; ++token)
        invalid |= static_cast<int>(!(row[token] >= 0.0f)) | static_cast<int>(row[token] > 1.001f);  // NaN: invalid
    if (invalid)
        for (int64_t token = 0; token < vocab; ++token)
            if (!(row[token] >= 0.0f) || row[token] > 1.001f)
                throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                                    "draft_probabilities row " + std::to_string(head) + " holds " +
                                        std::to_string(row[token]) + " at token " + std::to_string(token) +
                                        ", not a probability");
    int32_t count = 0;
    float threshold = 0.0f;  // a token enters when above it: positive, and above the k-th once k are held
    for (int64_t token = 0; token < vocab; ++token) {
        const float p = row[token];
        if (!(p > threshold)) continue;
        int32_t position = count < k ? count++ : k - 1;
        while (position > 0 && out[position - 1].probability < p) {
            out[position] = out[position - 1];
            --position;
        }
        out[position] = Candidate{static_cast<int32_t>(token), p};
        if (count == k) threshold = out[k - 1].probability;
    }
    return count;
}

int32_t token_index(const std::vector<int32_t>& tokens, int32_t token) {
    return static_cast<int32_t>(std::lower_bound(tokens.begin(), tokens.end(), token) - tokens.begin());
}

void check_input(const Viterbi& self, const cdz_accept_input* in, const cdz_accept_output* out) {
    if (!in || !out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "input or output is NULL");
    if (in->struct_size < sizeof(cdz_accept_input) || out->struct_size < sizeof(cdz_accept_output))
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "input or output struct is smaller than this ABI's");
    const cdz_token_tree* tree = in->tree;
    if (!tree) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the token tree is NULL");
    if (tree->node_count <= 0)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                            "the drafter proposed no nodes; Viterbi decoding needs the distributions of at least "
                            "one multi-token prediction head (pair this acceptor with draft.mtp)");
    if (!tree->tokens || !tree->parents)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the token tree has NULL tokens or parents");
    if (tree->tokens_per_node != 1)
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "trees of " + std::to_string(tree->tokens_per_node) +
                                                        " tokens per node are not supported (one codebook only)");
    for (int32_t i = 0; i < tree->node_count; ++i)
        if (tree->parents[i] != i - 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                                "node " + std::to_string(i) + " has parent " + std::to_string(tree->parents[i]) +
                                    "; Viterbi decoding needs a chain whose node i is head i's prediction");
    if (!in->draft_probabilities)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                            "draft_probabilities is NULL; it must hold each head's distribution over the vocabulary");
    if (in->vocab_size != self.transitions.vocab_size())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                            "the transitions file " + self.transitions_path + " covers a vocabulary of " +
                                std::to_string(self.transitions.vocab_size()) + " tokens, but the heads predict " +
                                std::to_string(in->vocab_size) +
                                " (build it with `cadenza build-transitions --vocab " +
                                std::to_string(in->vocab_size) + "` over the backbone's token ids)");
    if (!out->emitted_tokens) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "emitted_tokens is NULL");
    if (out->emitted_capacity < tree->node_count)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                            "emitted_tokens has room for " + std::to_string(out->emitted_capacity) +
                                " tokens, fewer than the tree's " + std::to_string(tree->node_count) + " nodes");
}

// `previous`: the last committed token x_0, or -1 when unknown.
void accept_heads(Viterbi& self, const cdz_accept_input* in, cdz_accept_output* out, int32_t previous) {
    check_input(self, in, out);
    const int64_t vocab = in->vocab_size;
    const int32_t node_count = in->tree->node_count;
    const int32_t n = self.heads > 0 ? std::min(self.heads, node_count) : node_count;
    const int32_t k = self.top_k;
    if (n < node_count && !self.warned_of_unused_heads) {
        self.warned_of_unused_heads = true;
        if (sdk::host().log_enabled(CDZ_LOG_WARN)) {
            const std::string message =
                "heads = " + std::to_string(self.heads) + " but the drafter proposes " + std::to_string(node_count) +
                " tokens a step: it computes " + std::to_string(node_count - n) +
                " rows nobody uses (and a phone-marker rule draws in them); give the drafter " +
                std::to_string(self.heads) + " heads (draft.mtp: num_heads = " + std::to_string(self.heads) + ")";
            sdk::host().log(CDZ_LOG_WARN, plugin_name, message.c_str());
        }
    }

    // 1. Each head's top-k.
    self.candidates.resize(static_cast<size_t>(n) * k);
    self.candidate_count.resize(n);
    for (int32_t t = 0; t < n; ++t) {
        const float* row = in->draft_probabilities + static_cast<size_t>(t) * static_cast<size_t>(vocab);
        self.candidate_count[t] = select_top_k(row, vocab, k, &self.candidates[static_cast<size_t>(t) * k], t);
        if (self.candidate_count[t] == 0)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                                "draft_probabilities row " + std::to_string(t) + " has no positive probability");
    }

    // 2. The m distinct tokens, ascending.
    self.tokens.clear();
    for (int32_t t = 0; t < n; ++t)
        for (int32_t c = 0; c < self.candidate_count[t]; ++c)
            self.tokens.push_back(self.candidates[static_cast<size_t>(t) * k + c].token);
    std::sort(self.tokens.begin(), self.tokens.end());
    self.tokens.erase(std::unique(self.tokens.begin(), self.tokens.end()), self.tokens.end());
    const auto m = static_cast<int32_t>(self.tokens.size());

    // 3. The m x m submatrix of log Q, once per call; a sparse row is walked
    //    once for all m columns (entries not stored are the row's floor).
    //    Q = 0 gives -inf: that transition is impossible.
    if (n > 1) {
        self.log_q.resize(static_cast<size_t>(m) * m);
        self.q_row.resize(m);
        for (int32_t a = 0; a < m; ++a) {
            self.transitions.gather_row(self.tokens[a], self.tokens.data(), static_cast<size_t>(m), self.q_row.data());
            double* log_row = self.log_q.data() + static_cast<size_t>(a) * m;
            for (int32_t b = 0; b < m; ++b)
                log_row[b] = self.q_row[b] > 0.0f ? std::log(static_cast<double>(self.q_row[b])) : negative_infinity;
        }
    }

    // 3b. log Q(x_0, a): the transition into step 1.
    const bool from_previous = self.prefix_transition && previous >= 0 && previous < vocab;
    if (from_previous) {
        self.q_row.resize(m);
        self.log_q_first.resize(m);
        self.transitions.gather_row(previous, self.tokens.data(), static_cast<size_t>(m), self.q_row.data());
        for (int32_t a = 0; a < m; ++a)
            self.log_q_first[a] = self.q_row[a] > 0.0f ? std::log(static_cast<double>(self.q_row[a])) : negative_infinity;
    }

    // 4. The first state, drawn from head 1's renormalized top-k (times the
    //    transition from x_0).
    int32_t first_token = -1;
    if (self.sample_first) {
        const int32_t count = self.candidate_count[0];
        self.first_weights.resize(count);
        auto weigh = [&](bool with_transition) {
            double total = 0.0;
            for (int32_t c = 0; c < count; ++c) {
                const double transition =
                    with_transition ? std::exp(self.log_q_first[token_index(self.tokens, self.candidates[c].token)]) : 1.0;
                total += self.candidates[c].probability * transition;
            }
            if (!(total > 0.0)) return false;
            for (int32_t c = 0; c < count; ++c) {
                const double transition =
                    with_transition ? std::exp(self.log_q_first[token_index(self.tokens, self.candidates[c].token)]) : 1.0;
                self.first_weights[c] = static_cast<float>(self.candidates[c].probability * transition / total);
            }
            return true;
        };
        if (!(from_previous && weigh(true))) weigh(false);
        const int64_t drawn = sdk::host().sample_index(self.rng, self.first_weights.data(), count);
        if (drawn < 0 || drawn >= count)
            throw sdk::Error(CDZ_STATUS_INTERNAL, "the host's sample_index returned an index out of range");
        first_token = self.candidates[drawn].token;
    }

    // 5. The states of each step with their log emissions log S_t.
    self.state_offset.resize(static_cast<size_t>(n) + 1);
    self.state_token.clear();
    self.state_emission.clear();
    for (int32_t t = 0; t < n; ++t) {
        self.state_offset[t] = static_cast<int32_t>(self.state_token.size());
        const float* row = in->draft_probabilities + static_cast<size_t>(t) * static_cast<size_t>(vocab);
        auto add_state = [&](int32_t index, float probability) {
            self.state_token.push_back(index);
            self.state_emission.push_back(std::log(static_cast<double>(probability)));
        };
        if (t == 0 && first_token >= 0) {
            add_state(token_index(self.tokens, first_token), row[first_token]);
        } else if (self.lattice == Lattice::per_head) {
            for (int32_t c = 0; c < self.candidate_count[t]; ++c) {
                const Candidate& candidate = self.candidates[static_cast<size_t>(t) * k + c];
                add_state(token_index(self.tokens, candidate.token), candidate.probability);
            }
        } else {
            for (int32_t a = 0; a < m; ++a)
                if (row[self.tokens[a]] > 0.0f) add_state(a, row[self.tokens[a]]);
        }
    }
    self.state_offset[n] = static_cast<int32_t>(self.state_token.size());

    // 6. Viterbi: delta_1 = log S_1; delta_t(j) = max_i [delta_{t-1}(i) +
    //    log Q(a_i, a_j)] + log S_t(a_j), back-pointers in `back`.
    self.delta.resize(self.state_token.size());
    self.back.resize(self.state_token.size());
    for (int32_t s = self.state_offset[0]; s < self.state_offset[1]; ++s) {
        self.delta[s] = self.state_emission[s] + (from_previous ? self.log_q_first[self.state_token[s]] : 0.0);
        self.back[s] = -1;
    }
    for (int32_t t = 1; t < n; ++t) {
        const int32_t previous_begin = self.state_offset[t - 1], previous_end = self.state_offset[t];
        for (int32_t j = self.state_offset[t]; j < self.state_offset[t + 1]; ++j) {
            const int32_t to = self.state_token[j];
            double best = negative_infinity;
            int32_t best_i = 0;
            for (int32_t i = previous_begin; i < previous_end; ++i) {
                const double value = self.delta[i] + self.log_q[static_cast<size_t>(self.state_token[i]) * m + to];
                if (value > best) {
                    best = value;
                    best_i = i - previous_begin;
                }
            }
            self.delta[j] = best + self.state_emission[j];
            self.back[j] = best_i;
        }
    }

    // 7. The best final state, then back-tracking.
    self.path.resize(n);
    double best = negative_infinity;
    int32_t best_last = 0;
    for (int32_t j = self.state_offset[n - 1]; j < self.state_offset[n]; ++j)
        if (self.delta[j] > best) {
            best = self.delta[j];
            best_last = j - self.state_offset[n - 1];
        }
    if (best > negative_infinity) {
        self.path[n - 1] = best_last;
        for (int32_t t = n - 1; t > 0; --t) self.path[t - 1] = self.back[self.state_offset[t] + self.path[t]];
    } else {
        // No path of positive probability (Q has zeros): each step's most
        // probable state.
        for (int32_t t = 0; t < n; ++t) {
            int32_t chosen = 0;
            for (int32_t s = self.state_offset[t]; s < self.state_offset[t + 1]; ++s)
                if (self.state_emission[s] > self.state_emission[self.state_offset[t] + chosen])
                    chosen = s - self.state_offset[t];
            self.path[t] = chosen;
        }
    }

    out->accepted_count = 0;  // nothing was verified: the engine appends the tokens as they are
    for (int32_t t = 0; t < n; ++t)
        out->emitted_tokens[t] = self.tokens[self.state_token[self.state_offset[t] + self.path[t]]];
    out->emitted_count = n;
}

// A synthesis's session remembers the last committed token x_0.
struct Session {
    Viterbi* viterbi;
    int32_t previous = -1;
};

Session& session_of(void* session) {
    if (!session) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the session is NULL");
    return *static_cast<Session*>(session);
}

cdz_status* session_create(void* ctx, void** out_session) noexcept {
    return sdk::guarded([&] {
        if (!out_session) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out_session is NULL");
        *out_session = new Session{&viterbi_of(ctx)};
    });
}

void session_destroy(void* session) noexcept { delete static_cast<Session*>(session); }

// The last of `tokens`, or `otherwise` when there are none.
int32_t last_token(const int32_t* tokens, int64_t count, int32_t otherwise) {
    if (count < 0 || (count > 0 && !tokens))
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the tokens are NULL or their count is negative");
    return count > 0 ? tokens[count - 1] : otherwise;
}

// Without a session, x_0 is the input's sequence's last token.
cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) noexcept {
    return sdk::guarded([&] {
        const int32_t previous = in ? last_token(in->sequence, in->sequence_length, -1) : -1;
        accept_heads(viterbi_of(ctx), in, out, previous);
    });
}

cdz_status* session_reset(void* session, const int32_t* tokens, int64_t count) noexcept {
    return sdk::guarded([&] { session_of(session).previous = last_token(tokens, count, -1); });
}

cdz_status* session_commit(void* session, const int32_t* tokens, int64_t count) noexcept {
    return sdk::guarded([&] {
        Session& state = session_of(session);
        state.previous = last_token(tokens, count, state.previous);
    });
}

cdz_status* session_accept(void* session, const cdz_accept_input* in, cdz_accept_output* out) noexcept {
    return sdk::guarded([&] {
        Session& state = session_of(session);
        accept_heads(*state.viterbi, in, out, state.previous);
    });
}

const cdz_acceptor_vtable vtable = {
    sizeof(cdz_acceptor_vtable), create, destroy, get_info, accept,
    session_create, session_destroy, session_reset, session_accept, session_commit,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.0.0",
    "Viterbi over the top-k of multi-token prediction heads with a token transition matrix (no verification)",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace
}  // namespace cadenza::viterbi

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    using namespace cadenza::viterbi;
    return cadenza::sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
