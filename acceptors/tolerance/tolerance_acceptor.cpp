// acceptor.tolerance: the tolerance mechanism of VADUSA (Li et al., ICASSP
// 2025) for MEDUSA-style draft trees.
//
// MEDUSA verification accepts a draft child when its token equals the
// "correct token" the target samples once after the child's parent. VADUSA
// lets the target sample tau times: a child is accepted when its token equals
// any of the tau samples, so up to tau children of a node pass. Among all
// accepted root-to-leaf paths the one with the largest product of target
// probabilities is kept, which both lengthens the accepted runs and prefers
// likely continuations. Draft probabilities play no part.
//
// Precisely, per call:
//   - a node is "open" when it is the committed prefix or an accepted node;
//     for every open node with children, tau tokens are sampled from the
//     target row after it, and each child whose token is among them is
//     accepted;
//   - the candidate paths end at accepted nodes none of whose children is
//     accepted (a prefix of a path is never preferred over the path: its
//     larger product only reflects that it is shorter);
//   - the kept path maximizes the product of p(token | parent) along it,
//     ties going to the longer path, then to the lower leaf index; with no
//     accepted child of the prefix the path is empty;
//   - the emitted tokens are the path's, then one token sampled from the
//     target row after the path's last node (row 0 for an empty path).
// At temperature 0 the rows are one-hot and tau = 1 is argmax matching.
//
// Random numbers, in this order: tau host->rng_uniform draws for each open
// node with children, in node-index order (the prefix first), then one for
// the emitted token. Each draw picks the first index whose cumulative mass
// exceeds u times the row's total, as host->sample_index does; the row's sums
// in blocks of 64 are built once per row (common/blocked_row.h). Only whether
// a draw names a child matters, so each draw is compared with the children's
// spans of the running total (inverting the row only within 1e-9 of a span's
// end): a node costs O(vocab) vectorized adds plus O(tau x children), which
// keeps a tau of hundreds cheap, and the decisions are the inversions'.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "common/acceptor_support.h"
#include "common/blocked_row.h"

namespace cadenza::acceptors::tolerance {
namespace {

constexpr const char* plugin_name = "acceptor.tolerance";

// Log-products closer than this are ties (double rounding, not preference).
constexpr double tie_tolerance = 1e-10;

struct ToleranceAcceptor {
    explicit ToleranceAcceptor(const cdz_instance_args& args);
    void get_info(cdz_acceptor_info* out) const;
    void accept(const cdz_accept_input* in, cdz_accept_output* out);

    cdz_rng* rng = nullptr;
    int32_t tau = 3;
    // Scratch kept between calls.
    BlockedRow blocks;                 // the row being drawn from
    int32_t prepared_row = -1;         // the target row in blocks this call; -1: none
    double prepared_total = 0.0;       // its mass
    std::vector<BlockedRow::Span> spans;  // the open node's children's tokens
    std::vector<int32_t> span_children;   // the child of each span
    std::vector<int32_t> first_child;  // [n + 1], index parent + 1; -1: none
    std::vector<int32_t> next_sibling; // [n]
    std::vector<uint8_t> accepted;     // [n]
    std::vector<uint8_t> extended;     // [n]: has an accepted child
    std::vector<double> log_probability;  // [n]: of the path ending at the node
    std::vector<int32_t> depth;        // [n]
    std::vector<int32_t> path;         // [n]
};

// Fetches target row `index`, checks it, readies self.blocks to draw from it
// and returns its total. The row of the emitted token is most often the one
// the last rejection was drawn from (a chain): it is then reused as it is.
double prepare_draws(ToleranceAcceptor& self, const TargetRows& target, int64_t vocab, int32_t index) {
    if (self.prepared_row == index) return self.prepared_total;
    const float* row = target.row(index);
    self.prepared_total = row_mass(row, vocab, "target", index);
    self.blocks.assign(row, vocab);
    self.prepared_row = index;
    return self.prepared_total;
}

// One draw from the row in self.blocks: the first index whose running mass
// exceeds u times the total, which has a positive probability (zero entries
// do not raise the sum); the last with mass when rounding leaves none.
int32_t draw(ToleranceAcceptor& self) {
    return static_cast<int32_t>(self.blocks.invert(sdk::host().rng_uniform(self.rng) * self.blocks.total()));
}

void run_accept(ToleranceAcceptor& self, const cdz_accept_input& in, cdz_accept_output& out) {
    const cdz_token_tree& tree = *in.tree;
    const int64_t vocab = in.vocab_size;
    const int32_t n = tree.node_count;
    const size_t nodes = static_cast<size_t>(n);
    const TargetRows target(in);
    self.first_child.assign(nodes + 1, -1);
    self.next_sibling.assign(nodes, -1);
    self.accepted.assign(nodes, 0);
    self.extended.assign(nodes, 0);
    self.log_probability.assign(nodes, 0.0);
    self.depth.assign(nodes, 0);
    self.prepared_row = -1;

    // Children lists in node-index order.
    for (int32_t i = n - 1; i >= 0; --i) {
        const size_t slot = static_cast<size_t>(tree.parents[i] + 1);
        self.next_sibling[static_cast<size_t>(i)] = self.first_child[slot];
        self.first_child[slot] = i;
    }

    // Open nodes in node-index order: a node's children all come after it,
    // so its acceptance is settled before it is reached.
    for (int32_t open = -1; open < n; ++open) {
        if (open >= 0 && !self.accepted[static_cast<size_t>(open)]) continue;
        const int32_t first = self.first_child[static_cast<size_t>(open + 1)];
        if (first < 0) continue;
        const double total = prepare_draws(self, target, vocab, open + 1);
        const float* row = self.blocks.row();
        self.spans.clear();
        self.span_children.clear();
        for (int32_t child = first; child >= 0; child = self.next_sibling[static_cast<size_t>(child)]) {
            const int32_t token = tree.tokens[child];
            if (token < 0 || token >= vocab) continue;  // no draw names it
            self.spans.push_back(self.blocks.span_of(static_cast<uint32_t>(token)));
            self.span_children.push_back(child);
        }
        // tau draws, each accepting the children whose token it names.
        for (int32_t k = 0; k < self.tau; ++k) {
            const double u = sdk::host().rng_uniform(self.rng) * self.blocks.total();
            for (size_t s = 0; s < self.spans.size(); ++s)
                if (self.blocks.inverts_to(self.spans[s], u))
                    self.accepted[static_cast<size_t>(self.span_children[s])] = 1;
        }
        for (size_t s = 0; s < self.spans.size(); ++s) {
            const int32_t child = self.span_children[s];
            const size_t c = static_cast<size_t>(child);
            if (!self.accepted[c]) continue;
            const int32_t token = tree.tokens[child];
            // The token was sampled, so its probability is positive.
            self.log_probability[c] = std::log(static_cast<double>(row[token]) / total);
            if (open >= 0) {
                const size_t parent = static_cast<size_t>(open);
                self.log_probability[c] += self.log_probability[parent];
                self.depth[c] = self.depth[parent] + 1;
                self.extended[parent] = 1;
            } else {
                self.depth[c] = 1;
            }
        }
    }

    // The most probable maximal accepted path; ties: longer, then lower leaf.
    int32_t leaf = -1;
    for (int32_t i = 0; i < n; ++i) {
        const size_t c = static_cast<size_t>(i);
        if (!self.accepted[c] || self.extended[c]) continue;
        if (leaf < 0) {
            leaf = i;
            continue;
        }
        // Products equal but for rounding count as ties.
        const double difference = self.log_probability[c] - self.log_probability[static_cast<size_t>(leaf)];
        if (difference > tie_tolerance ||
            (difference >= -tie_tolerance && self.depth[c] > self.depth[static_cast<size_t>(leaf)]))
            leaf = i;  // a later index never wins a full tie
    }

    self.path.clear();
    for (int32_t node = leaf; node >= 0; node = tree.parents[node]) self.path.push_back(node);
    std::reverse(self.path.begin(), self.path.end());
    for (int32_t node : self.path) {
        out.accepted_nodes[out.accepted_count++] = node;
        out.emitted_tokens[out.emitted_count++] = tree.tokens[node];
    }
    prepare_draws(self, target, vocab, leaf + 1);
    out.emitted_tokens[out.emitted_count++] = draw(self);
}

const cdz_param_spec params[] = {
    {"tau", CDZ_PARAM_INT, "3", 1, 1.0, 1024.0, nullptr,
     "target samples per node: a draft is accepted if it matches any of them (1 is MEDUSA's rule)"},
};

ToleranceAcceptor::ToleranceAcceptor(const cdz_instance_args& args) : rng(args.rng) {
    if (!rng) invalid("no random stream in the instance args");
    const int64_t tau_param = sdk::Params(args).integer("tau");
    if (tau_param < 1 || tau_param > 1024) invalid("tau must be in [1, 1024], got " + std::to_string(tau_param));
    tau = static_cast<int32_t>(tau_param);
}

void ToleranceAcceptor::get_info(cdz_acceptor_info* out) const {
    if (!out) invalid("out is NULL");
    out->verifies = 1;
    out->needs_draft_probabilities = 0;
    set_reads_target_rows(out);
}

void ToleranceAcceptor::accept(const cdz_accept_input* in, cdz_accept_output* out) {
    check_accept_call(in, out, true);
    run_accept(*this, *in, *out);
}

const cdz_acceptor_vtable vtable = {sizeof(cdz_acceptor_vtable), sdk::create<ToleranceAcceptor>,
                                    sdk::destroy<ToleranceAcceptor>, sdk::method<&ToleranceAcceptor::get_info>,
                                    sdk::method<&ToleranceAcceptor::accept>,
                                    nullptr, nullptr, nullptr, nullptr, nullptr};  // no sessions

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.0.0",
    "VADUSA tolerance: a draft passes if it matches any of tau target samples; the most probable path wins",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace
}  // namespace cadenza::acceptors::tolerance

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    using namespace cadenza::acceptors::tolerance;
    return cadenza::sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
