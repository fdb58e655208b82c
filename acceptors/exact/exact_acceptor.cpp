// acceptor.exact: standard speculative sampling (Leviathan et al. 2023,
// Chen et al. 2023), extended to token trees by recursive rejection sampling
// over siblings (SpecInfer, Miao et al. 2024; multi-draft speculative
// sampling). The emitted tokens are distributed exactly as the target's.
//
// One level of the walk, at the current node (the committed prefix first):
//   r <- the target's distribution after the node
//   for each child c of the node, in node-index order:
//       x = token of c, q = the distribution c was drawn from (draft row c,
//       or one-hot at x when the drafter sent no probabilities)
//       accept c with probability min(1, r(x) / q(x)): descend into c
//       otherwise r <- norm(max(0, r - q))   (kept as is if that is all zero)
//   no child accepted (or none exists): emit one token sampled from r and stop.
// A walk that reaches a leaf emits the target's "bonus" token after it.
//
// Why this keeps the target's distribution on trees: a single draft x ~ q,
// accepted with probability min(1, r(x)/q(x)) and otherwise replaced by a
// sample of norm(max(0, r - q)), yields a sample of r. Sibling j+1 is drawn
// from its own row independently of how sibling j was judged, so "try the
// next sibling against the residual" is that same step applied to the
// residual, and by induction over the siblings the level yields a sample of
// the target's distribution. This holds whether siblings were drawn i.i.d.
// (with replacement) or each from a row that already excludes the earlier
// siblings (without replacement), as long as row c is the distribution c was
// actually drawn from; with greedy drafts (no rows) q is one-hot and the
// residual is the target with the rejected tokens removed.
//
// Random numbers, in this order (acceptor.bias consumes them identically,
// so that with beta = 0 both give the same outputs for the same stream):
//   1. for each child tried, in the order above: one host->rng_uniform u,
//      accept iff u < min(1, r(x) / q(x));
//   2. at the level where the walk stops: one host->sample_index over r.
//
// verification = "block" (Sun et al., "Block verification accelerates
// speculative decoding", ICLR 2025, Algorithm 2) judges a chain X_1..X_g as a
// whole; it keeps the target's distribution too, and in expectation keeps at
// least as many tokens as the walk above (the most any valid rule keeps from
// one drafted chain). With P_i the target row before X_i, Q_i the row X_i was
// drawn from (one-hot without rows) and P_{g+1} the row after the chain:
//   w_0 = 1,  w_i = min(1, w_{i-1} P_i(X_i) / Q_i(X_i))
//   s_i = sum_x max(0, w_i P_{i+1}(x) - Q_{i+1}(x))           (i < g)
//   h_g = w_g,  h_i = s_i / (s_i + 1 - w_i)  (0 when both are 0),  h_0 = 1
//   tau = the largest i with u_i < h_i, u_i uniform
//   emit X_1..X_tau, then a sample of P_{g+1} (tau = g) or of
//   max(0, w_tau P_{tau+1} - Q_{tau+1}) (kept as P_1 if that has no mass).
// Random numbers: u_g, u_{g-1}, ... one host->rng_uniform each, from the end
// of the chain down to the first success, then one host->sample_index. A
// tree that is not a single chain is walked as above.
// Arithmetic, also shared with acceptor.bias: r and q are divided by their
// own sums taken in double (in eight interleaved partial sums,
// acceptor_support.h); the residual is computed in double per entry, stored
// as float, and its sum taken the same way.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "common/acceptor_support.h"

namespace cadenza::acceptors::exact {
namespace {

constexpr const char* plugin_name = "acceptor.exact";

struct ExactAcceptor {
    explicit ExactAcceptor(const cdz_instance_args& args);
    void get_info(cdz_acceptor_info* out) const;
    void accept(const cdz_accept_input* in, cdz_accept_output* out);

    cdz_rng* rng = nullptr;
    bool block_verification = false;
    // Residual scratch: two rows, reused across calls.
    std::vector<float> scratch[2];
    // Block verification's weights w_0..w_g and the rows' sums, reused.
    std::vector<double> weights, target_masses, draft_masses;
};

// min(1, p / q) for normalized probabilities; q = 0 (a draft its own
// distribution calls impossible) accepts whenever the target allows it.
double acceptance_probability(double p, double q) {
    if (q <= 0.0) return p > 0.0 ? 1.0 : 0.0;
    const double ratio = p / q;
    return ratio < 1.0 ? ratio : 1.0;
}

void emit_sample(ExactAcceptor& self, const float* row, int64_t vocab, cdz_accept_output& out) {
    const int64_t token = sdk::host().sample_index(self.rng, row, vocab);
    if (token < 0 || token >= vocab) fail(CDZ_STATUS_INTERNAL, "the host's sample_index failed");
    out.emitted_tokens[out.emitted_count++] = static_cast<int32_t>(token);
}

bool is_chain(const cdz_token_tree& tree) {
    for (int32_t i = 0; i < tree.node_count; ++i)
        if (tree.parents[i] != i - 1) return false;
    return true;
}

// Block verification of a chain of g >= 1 nodes (the rule in the header).
void run_block(ExactAcceptor& self, const cdz_accept_input& in, cdz_accept_output& out) {
    const cdz_token_tree& tree = *in.tree;
    const int64_t vocab = in.vocab_size;
    const int32_t g = tree.node_count;
    const TargetRows target(in);
    auto draft_row = [&](int32_t node) {
        return in.draft_probabilities ? in.draft_probabilities + static_cast<int64_t>(node) * vocab : nullptr;
    };
    // P_{i+1} is target row i; node i holds X_{i+1}, drawn from draft row i.
    std::vector<double>& w = self.weights;
    std::vector<double>& target_mass = self.target_masses;
    std::vector<double>& draft_mass = self.draft_masses;
    w.assign(static_cast<size_t>(g) + 1, 0.0);
    target_mass.assign(static_cast<size_t>(g), 0.0);
    draft_mass.assign(static_cast<size_t>(g), 1.0);
    w[0] = 1.0;
    for (int32_t i = 0; i < g; ++i) {
        const float* p = target.row(i);
        target_mass[i] = row_mass(p, vocab, "target", i);
        const int32_t x = tree.tokens[i];
        const float* q = draft_row(i);
        if (q) draft_mass[i] = row_mass(q, vocab, "draft", i);
        const double q_x = q ? q[x] / draft_mass[i] : 1.0;
        w[i + 1] = w[i] > 0.0 ? acceptance_probability(w[i] * (p[x] / target_mass[i]), q_x) : 0.0;
    }
    auto emit_chain = [&](int32_t count) {
        for (int32_t i = 0; i < count; ++i) {
            out.accepted_nodes[out.accepted_count++] = i;
            out.emitted_tokens[out.emitted_count++] = tree.tokens[i];
        }
    };
    if (sdk::host().rng_uniform(self.rng) < w[g]) {
        emit_chain(g);
        emit_sample(self, target.row(g), vocab, out);
        return;
    }
    float* residual = self.scratch[0].data();
    for (int32_t tau = g - 1; tau >= 1; --tau) {
        // s_tau over P_{tau+1} (target row tau) and Q_{tau+1} (draft row tau):
        // w P / mass is P / (mass / w).
        const double s = w[tau] > 0.0 ? subtract_rows(target.row(tau), target_mass[tau] / w[tau], draft_row(tau),
                                                      draft_mass[tau], tree.tokens[tau], vocab, residual)
                                      : 0.0;
        const double h = s > 0.0 ? s / (s + 1.0 - w[tau]) : 0.0;
        if (sdk::host().rng_uniform(self.rng) < h) {
            emit_chain(tau);
            emit_sample(self, residual, vocab, out);
            return;
        }
    }
    // tau = 0: the first token's correction, as the walk's.
    const double mass = subtract_rows(target.row(0), target_mass[0], draft_row(0), draft_mass[0], tree.tokens[0],
                                      vocab, residual);
    emit_sample(self, mass > 0.0 ? residual : target.row(0), vocab, out);
}

void run_accept(ExactAcceptor& self, const cdz_accept_input& in, cdz_accept_output& out) {
    const cdz_token_tree& tree = *in.tree;
    const int64_t vocab = in.vocab_size;
    const int32_t n = tree.node_count;
    const TargetRows target(in);

    int32_t current = -1;  // the node whose children are judged; -1: the prefix
    for (;;) {
        // The level's distribution starts as the target row after `current`;
        // it points into a scratch row once a rejection has updated it.
        const float* residual = target.row(current + 1);
        double residual_mass = row_mass(residual, vocab, "target", current + 1);
        int which_scratch = 0;

        int32_t accepted = -1;
        for (int32_t child = current + 1; child < n && accepted < 0; ++child) {
            if (tree.parents[child] != current) continue;
            const int32_t x = tree.tokens[child];
            const float* draft = in.draft_probabilities ? in.draft_probabilities + static_cast<int64_t>(child) * vocab
                                                        : nullptr;
            const double draft_mass = draft ? row_mass(draft, vocab, "draft", child) : 1.0;
            // q(x): the child's draft distribution, one-hot at x without one.
            const double q_x = draft ? draft[x] / draft_mass : 1.0;

            const double u = sdk::host().rng_uniform(self.rng);
            if (u < acceptance_probability(residual[x] / residual_mass, q_x)) {
                accepted = child;
                break;
            }
            // Rejected: r <- norm(max(0, r - q)), unless that has no mass left
            // (only through rounding, since then r = q and x was accepted).
            float* next = self.scratch[which_scratch].data();
            const double next_mass = subtract_rows(residual, residual_mass, draft, draft_mass, x, vocab, next);
            if (next_mass > 0.0) {
                residual = next;
                residual_mass = next_mass;
                which_scratch ^= 1;
            }
        }

        if (accepted < 0) {
            // Correction (after rejections) or bonus (no child to judge).
            emit_sample(self, residual, vocab, out);
            return;
        }
        out.accepted_nodes[out.accepted_count++] = accepted;
        out.emitted_tokens[out.emitted_count++] = tree.tokens[accepted];
        current = accepted;
    }
}

const char* const verification_choices[] = {"token", "block", nullptr};

const cdz_param_spec params[] = {
    {"verification", CDZ_PARAM_STRING, "\"token\"", 0, 0.0, 0.0, verification_choices,
     "\"token\": each drafted token judged in turn (recursive rejection on trees); \"block\": a chain judged as a "
     "whole (Sun et al. 2025), keeping at least as many tokens in expectation; trees are still judged token by token"},
};

ExactAcceptor::ExactAcceptor(const cdz_instance_args& args) : rng(args.rng) {
    if (!rng) invalid("no random stream in the instance args");
    block_verification = sdk::Params(args).string("verification") == "block";
}

void ExactAcceptor::get_info(cdz_acceptor_info* out) const {
    if (!out) invalid("out is NULL");
    out->verifies = 1;
    out->needs_draft_probabilities = 1;
    set_reads_target_rows(out);
}

void ExactAcceptor::accept(const cdz_accept_input* in, cdz_accept_output* out) {
    check_accept_call(in, out, true);
    for (auto& row : scratch)
        if (static_cast<int64_t>(row.size()) < in->vocab_size) row.resize(static_cast<size_t>(in->vocab_size));
    if (block_verification && in->tree->node_count > 0 && is_chain(*in->tree))
        run_block(*this, *in, *out);
    else
        run_accept(*this, *in, *out);
}

const cdz_acceptor_vtable vtable = {sizeof(cdz_acceptor_vtable), sdk::create<ExactAcceptor>,
                                    sdk::destroy<ExactAcceptor>, sdk::method<&ExactAcceptor::get_info>,
                                    sdk::method<&ExactAcceptor::accept>,
                                    nullptr, nullptr, nullptr, nullptr, nullptr};  // no sessions

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.1.0",
    "standard speculative sampling with recursive rejection over siblings: output distributed as the target's",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace
}  // namespace cadenza::acceptors::exact

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    using namespace cadenza::acceptors::exact;
    return cadenza::sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
