// Principled Coarse-Graining (Yanuka et al.): group-level speculative
// acceptance over overlapping Acoustic Similarity Groups.
//
// Notation as in the paper: q is the TARGET distribution, p the DRAFT
// distribution. S(t) = {k : t in G_k}, N(t) = |S(t)|, equal-split weights
// w(k, t) = 1{t in G_k} / N(t) (Eq. 3), and the coarse distributions
//   P_c(G_k) = sum_{t in G_k} p(t) w(k, t)   (draft,  Eq. 4-5)
//   Q_c(G_k) = sum_{t in G_k} q(t) w(k, t)   (target, Eq. 4-5).
// A draft token x ~ p gets its group K ~ w(., x) (Eq. 6), so K ~ P_c, and K is
// accepted with probability min(1, Q_c(K) / P_c(K)) (Eq. 7). On rejection a
// group K' ~ norm([Q_c - P_c]+) (Eq. 8) is drawn by thinning (Eq. 9) and the
// emitted token is drawn within K' from the q-conditional (Eq. 10). The
// accepted draft token stands for its group (it is emitted as itself).
//
// Everything random is drawn from a UniformSource, which the plugin binds to
// the host's seeded stream, so one seed reproduces a run bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "token_groups.h"

namespace cadenza::pcg {

// Uniform numbers in [0, 1).
struct UniformSource {
    double (*next)(void* state) = nullptr;
    void* state = nullptr;
    double operator()() const { return next(state); }
};

// The groups of a file over a vocabulary, completed with a singleton group
// for every token no group holds, with the reverse index t -> S(t).
class GroupIndex {
public:
    explicit GroupIndex(const TokenGroups& groups);

    int64_t vocab_size() const { return static_cast<int64_t>(inverse_count_.size()); }
    // Groups, the file's first (0 .. file_group_count - 1), then the singletons.
    size_t group_count() const { return group_offsets_.size() - 1; }
    size_t file_group_count() const { return file_group_count_; }
    size_t group_size(size_t k) const { return static_cast<size_t>(group_offsets_[k + 1] - group_offsets_[k]); }
    const uint32_t* group_members(size_t k) const { return group_members_.data() + group_offsets_[k]; }
    // S(t): the groups holding token t, ascending.
    size_t membership_count(uint32_t t) const { return static_cast<size_t>(token_offsets_[t + 1] - token_offsets_[t]); }
    const uint32_t* memberships(uint32_t t) const { return token_groups_.data() + token_offsets_[t]; }
    // w(k, t) for k in S(t): 1 / N(t).
    double weight(uint32_t t) const { return inverse_count_[t]; }

    // sum_{t in G_k} dist(t) w(k, t): P_c(G_k) for dist = p, Q_c(G_k) for dist = q.
    double coarse(size_t k, const float* dist) const;
    // The same for every group (O(sum of group sizes)).
    void coarse_all(const float* dist, std::vector<double>& out) const;
    // K ~ w(., t) over S(t) (Eq. 6): uniform among the groups holding t.
    uint32_t draw_group(uint32_t t, const UniformSource& uniform) const;
    // z within G_k with Pr(z = t | k) = q(t) w(k, t) / Q_c(G_k) (Eq. 10).
    uint32_t draw_member(size_t k, const float* q, const UniformSource& uniform) const;

private:
    size_t file_group_count_ = 0;
    std::vector<uint64_t> group_offsets_;
    std::vector<uint32_t> group_members_;
    std::vector<uint64_t> token_offsets_;
    std::vector<uint32_t> token_groups_;
    std::vector<double> inverse_count_;
};

// Draws an index of `dist` (weights summing to a positive total) by
// inversion with one uniform number.
uint32_t sample_row(const float* dist, int64_t count, const UniformSource& uniform);

// A group drawn from the coarse residual and the token emitted for it.
struct ResidualDraw {
    uint32_t group = 0;
    uint32_t token = 0;
    int64_t rounds = 0;      // thinning proposals made
    bool enumerated = false; // the exact fallback was used
};

// K' ~ norm([Q_c - P_c]+) (Eq. 8) and z ~ q(. | K') (Eq. 10), for target row q
// and draft row p.
//
// Thinning (Eq. 9): propose y ~ q and K ~ w(., y), so K ~ Q_c; accept K with
// probability [1 - P_c(K) / Q_c(K)]+; otherwise propose again. Each round
// costs O(|G_K|) after a one-off O(V) table of q's cumulative sums.
//
// Fallback: when `max_rounds` proposals were all refused (max_rounds = 0:
// at once), Q_c and P_c are computed for every group and K' is drawn from the
// residual directly. The result is then still exactly norm([Q_c - P_c]+)
// (every thinning round is an independent trial whose accepted output has
// that law, so stopping after a fixed number of refusals does not bias it).
// If the residual is numerically empty (P_c == Q_c up to rounding, where a
// rejection has probability zero), K' is drawn from Q_c instead.
ResidualDraw sample_coarse_residual(const GroupIndex& index, const float* q, const float* p, int64_t max_rounds,
                                    const UniformSource& uniform);

// Rows of V probabilities by index: a matrix, or rows fetched one at a time
// (the plugin's, which reads the host's target rows on demand and checks
// each row it is asked for).
struct Rows {
    const float* matrix = nullptr;  // [rows x V]
    const float* (*fetch)(void* ctx, int32_t row) = nullptr;
    void* ctx = nullptr;

    const float* at(int32_t row, int64_t vocab) const {
        return fetch ? fetch(ctx, row) : matrix + static_cast<int64_t>(row) * vocab;
    }
};

// One decoding step over a draft tree (the acceptor's whole rule). It reads
// the target rows of the levels it reaches and the draft rows of the nodes it
// judges, nothing else.
struct StepInput {
    int32_t node_count = 0;
    const int32_t* tokens = nullptr;   // [node_count]
    const int32_t* parents = nullptr;  // [node_count], parents[i] < i, -1: child of the prefix
    Rows target;                       // q: node_count + 1 rows, row i + 1 after node i
    Rows draft;                        // p: node_count rows, the distribution node i was drawn from
};

struct StepOutput {
    std::vector<int32_t> accepted_nodes;  // root-to-leaf path
    std::vector<int32_t> emitted;         // the path's tokens, then one token from the target side
    // Diagnostics: the group label of each emitted token (K_i for accepted
    // nodes, the residual's K' for a correction); the bonus token has none
    // (UINT32_MAX).
    std::vector<uint32_t> groups;
    bool corrected = false;        // the last token came from a rejection (not a bonus)
    int64_t thinning_rounds = 0;
    int64_t enumerations = 0;      // residuals drawn by enumerating every group
};

// Walks the tree depth by depth from the prefix. At each position the
// children of the last accepted node are tried in index order:
//  - the first child x_1 with K_1 ~ w(., x_1) is accepted with probability
//    min(1, Q_c(K_1) / P_c^1(K_1)) (Eq. 7);
//  - if it is the only child and is rejected, the correction is drawn from
//    norm([Q_c - P_c^1]+) by thinning (sample_coarse_residual);
//  - with more children, a rejection replaces the coarse target by the
//    residual T = norm([T - P_c^j]+) (computed over all groups) and the next
//    child is tested against T: accept with min(1, T(K_j) / P_c^j(K_j)). This
//    is multi-round speculative sampling (SpecInfer) on the group variable;
//    it keeps the emitted group distributed as Q_c when siblings are
//    independent draws from their draft rows. When every child is rejected, a
//    group is drawn from T and the token from the q-conditional in it.
// When no child remains (a leaf, or an empty tree), the bonus token is drawn
// from q after the last accepted node.
void pcg_step(const GroupIndex& index, const StepInput& input, int64_t max_thinning_rounds,
              const UniformSource& uniform, StepOutput& output);

// The codes the audio takes for the accepted nodes of `output`, written to
// codes[0, accepted count), when the target picks within each accepted group
// (acceptor.pcg's group_code = "target"): for the k-th node of the path,
// z ~ q(. | K_k) (Eq. 10) from the target's row at the node's position, one
// uniform number each; the node's own token, with no draw, where K_k is a
// singleton. The draws come after every draw of the step that made `output`,
// in path order. The sequence keeps the drafted tokens (whose keys and values
// the target's cache holds); only the audio hears z.
void draw_group_codes(const GroupIndex& index, const StepInput& input, const StepOutput& output,
                      const UniformSource& uniform, int32_t* codes);

}  // namespace cadenza::pcg
