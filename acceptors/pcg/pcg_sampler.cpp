#include "pcg_sampler.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/blocked_row.h"

namespace cadenza::pcg {

GroupIndex::GroupIndex(const TokenGroups& groups) {
    groups.validate("token groups");
    const uint64_t vocab = groups.vocab_size;
    std::vector<uint64_t> counts(vocab, 0);
    for (uint32_t t : groups.members) ++counts[t];

    file_group_count_ = groups.group_count();
    group_offsets_ = groups.offsets;
    group_members_ = groups.members;
    for (uint64_t t = 0; t < vocab; ++t) {
        if (counts[t] != 0) continue;  // a token no group holds is a singleton
        group_members_.push_back(static_cast<uint32_t>(t));
        group_offsets_.push_back(group_members_.size());
        counts[t] = 1;
    }
    if (group_count() > std::numeric_limits<uint32_t>::max())
        throw GroupsError("token groups: more than 2^32 - 1 groups");

    token_offsets_.assign(vocab + 1, 0);
    for (uint64_t t = 0; t < vocab; ++t) token_offsets_[t + 1] = token_offsets_[t] + counts[t];
    token_groups_.resize(group_members_.size());
    std::vector<uint64_t> fill(token_offsets_.begin(), token_offsets_.end() - 1);
    for (size_t k = 0; k < group_count(); ++k)
        for (uint64_t i = group_offsets_[k]; i < group_offsets_[k + 1]; ++i)
            token_groups_[fill[group_members_[i]]++] = static_cast<uint32_t>(k);
    inverse_count_.resize(vocab);
    for (uint64_t t = 0; t < vocab; ++t) inverse_count_[t] = 1.0 / static_cast<double>(counts[t]);
}

double GroupIndex::coarse(size_t k, const float* dist) const {
    double sum = 0.0;
    for (uint64_t i = group_offsets_[k]; i < group_offsets_[k + 1]; ++i) {
        const uint32_t t = group_members_[i];
        sum += static_cast<double>(dist[t]) * inverse_count_[t];
    }
    return sum;
}

void GroupIndex::coarse_all(const float* dist, std::vector<double>& out) const {
    out.resize(group_count());
    for (size_t k = 0; k < group_count(); ++k) out[k] = coarse(k, dist);
}

uint32_t GroupIndex::draw_group(uint32_t t, const UniformSource& uniform) const {
    const size_t n = membership_count(t);
    size_t choice = static_cast<size_t>(uniform() * static_cast<double>(n));
    if (choice >= n) choice = n - 1;
    return memberships(t)[choice];
}

uint32_t GroupIndex::draw_member(size_t k, const float* q, const UniformSource& uniform) const {
    const uint32_t* members = group_members(k);
    const size_t size = group_size(k);
    double total = 0.0;
    for (size_t i = 0; i < size; ++i) total += static_cast<double>(q[members[i]]) * inverse_count_[members[i]];
    const double u = uniform();
    if (!(total > 0.0)) {
        // Unreachable for groups drawn from Q_c or a residual of it (they
        // have Q_c > 0); kept as a guard: uniform within the group.
        size_t choice = static_cast<size_t>(u * static_cast<double>(size));
        return members[std::min(choice, size - 1)];
    }
    const double target = u * total;
    double cumulative = 0.0;
    uint32_t last = members[0];
    for (size_t i = 0; i < size; ++i) {
        const double mass = static_cast<double>(q[members[i]]) * inverse_count_[members[i]];
        if (mass <= 0.0) continue;
        cumulative += mass;
        last = members[i];
        if (target < cumulative) return members[i];
    }
    return last;
}

uint32_t sample_row(const float* dist, int64_t count, const UniformSource& uniform) {
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i) total += dist[i] > 0.0f ? dist[i] : 0.0f;
    const double target = uniform() * total;
    double cumulative = 0.0;
    int64_t last = 0;
    for (int64_t i = 0; i < count; ++i) {
        if (!(dist[i] > 0.0f)) continue;
        cumulative += dist[i];
        last = i;
        if (target < cumulative) return static_cast<uint32_t>(i);
    }
    return static_cast<uint32_t>(last);
}

namespace {

// Draws an index of non-negative weights (positive total) by inversion.
size_t sample_weights(const std::vector<double>& weights, double total, const UniformSource& uniform) {
    const double target = uniform() * total;
    double cumulative = 0.0;
    size_t last = 0;
    for (size_t k = 0; k < weights.size(); ++k) {
        if (weights[k] <= 0.0) continue;
        cumulative += weights[k];
        last = k;
        if (target < cumulative) return k;
    }
    return last;
}

// T <- [T - P]+, normalized. A numerically empty residual leaves T as it was
// (the rejection that led here had probability zero).
void subtract_and_normalize(std::vector<double>& target, const std::vector<double>& draft) {
    double total = 0.0;
    for (size_t k = 0; k < target.size(); ++k) total += std::max(0.0, target[k] - draft[k]);
    if (!(total > 0.0)) return;
    for (size_t k = 0; k < target.size(); ++k) target[k] = std::max(0.0, target[k] - draft[k]) / total;
}

}  // namespace

ResidualDraw sample_coarse_residual(const GroupIndex& index, const float* q, const float* p, int64_t max_rounds,
                                    const UniformSource& uniform) {
    ResidualDraw draw;
    const int64_t vocab = index.vocab_size();
    if (max_rounds > 0) {
        const acceptors::BlockedRow row(q, vocab);
        const double total = row.total();
        for (; draw.rounds < max_rounds && total > 0.0;) {
            ++draw.rounds;
            const uint32_t y = row.invert(uniform() * total);
            const uint32_t k = index.draw_group(y, uniform);  // K ~ Q_c
            const double qc = index.coarse(k, q);
            const double pc = index.coarse(k, p);
            // Accept with probability [1 - P_c(K) / Q_c(K)]+ (Eq. 9).
            if (uniform() * qc < qc - pc) {
                draw.group = k;
                draw.token = index.draw_member(k, q, uniform);
                return draw;
            }
        }
    }
    // Exact fallback: enumerate the residual over every group.
    draw.enumerated = true;
    std::vector<double> target, draft;
    index.coarse_all(q, target);
    index.coarse_all(p, draft);
    double total = 0.0;
    for (size_t k = 0; k < target.size(); ++k) {
        const double residual = std::max(0.0, target[k] - draft[k]);
        total += residual;
        draft[k] = residual;
    }
    if (total > 0.0) {
        draw.group = static_cast<uint32_t>(sample_weights(draft, total, uniform));
    } else {
        const uint32_t y = sample_row(q, vocab, uniform);
        draw.group = index.draw_group(y, uniform);
    }
    draw.token = index.draw_member(draw.group, q, uniform);
    return draw;
}

void pcg_step(const GroupIndex& index, const StepInput& input, int64_t max_thinning_rounds,
              const UniformSource& uniform, StepOutput& output) {
    const int64_t vocab = index.vocab_size();
    const int32_t n = input.node_count;
    output.accepted_nodes.clear();
    output.emitted.clear();
    output.groups.clear();
    output.corrected = false;
    output.thinning_rounds = 0;
    output.enumerations = 0;

    // Children of each node (index parent + 1), in node order.
    std::vector<int32_t> child_offsets(static_cast<size_t>(n) + 2, 0), children(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) ++child_offsets[static_cast<size_t>(input.parents[i]) + 2];
    for (size_t i = 1; i < child_offsets.size(); ++i) child_offsets[i] += child_offsets[i - 1];
    for (int32_t i = 0; i < n; ++i) children[static_cast<size_t>(child_offsets[static_cast<size_t>(input.parents[i]) + 1]++)] = i;
    // child_offsets[parent + 1] is now the end of parent's children; their
    // start is child_offsets[parent] (for parent = -1: 0).
    auto children_of = [&](int32_t parent, const int32_t*& begin, const int32_t*& end) {
        const size_t slot = static_cast<size_t>(parent + 1);
        begin = children.data() + (slot == 0 ? 0 : child_offsets[slot - 1]);
        end = children.data() + child_offsets[slot];
    };

    auto draft_row = [&](int32_t node) { return input.draft.at(node, vocab); };
    auto accept_node = [&](int32_t node, uint32_t group) {
        output.accepted_nodes.push_back(node);
        output.emitted.push_back(input.tokens[node]);
        output.groups.push_back(group);
    };
    auto emit = [&](uint32_t token, uint32_t group, bool corrected) {
        output.emitted.push_back(static_cast<int32_t>(token));
        output.groups.push_back(group);
        output.corrected = corrected;
    };

    int32_t parent = -1;
    std::vector<double> residual, draft_coarse;
    for (;;) {
        const float* q = input.target.at(parent + 1, vocab);
        const int32_t *first, *last;
        children_of(parent, first, last);
        if (first == last) {  // bonus token from the target
            emit(sample_row(q, vocab, uniform), std::numeric_limits<uint32_t>::max(), false);
            return;
        }

        // The first child against Q_c (Eq. 6-7).
        const int32_t node = *first;
        const float* p = draft_row(node);
        const uint32_t k = index.draw_group(static_cast<uint32_t>(input.tokens[node]), uniform);
        const double pc = index.coarse(k, p), qc = index.coarse(k, q);
        if (uniform() * pc < qc) {
            accept_node(node, k);
            parent = node;
            continue;
        }
        if (last - first == 1) {  // a chain: the residual by thinning (Eq. 8-10)
            const ResidualDraw draw = sample_coarse_residual(index, q, p, max_thinning_rounds, uniform);
            output.thinning_rounds += draw.rounds;
            output.enumerations += draw.enumerated ? 1 : 0;
            emit(draw.token, draw.group, true);
            return;
        }

        // Siblings: multi-round rejection on the group variable, against the
        // explicit residual T.
        index.coarse_all(q, residual);
        index.coarse_all(p, draft_coarse);
        subtract_and_normalize(residual, draft_coarse);
        ++output.enumerations;
        int32_t accepted = -1;
        for (const int32_t* sibling = first + 1; sibling != last; ++sibling) {
            const float* ps = draft_row(*sibling);
            const uint32_t ks = index.draw_group(static_cast<uint32_t>(input.tokens[*sibling]), uniform);
            if (uniform() * index.coarse(ks, ps) < residual[ks]) {
                accept_node(*sibling, ks);
                accepted = *sibling;
                break;
            }
            index.coarse_all(ps, draft_coarse);
            subtract_and_normalize(residual, draft_coarse);
        }
        if (accepted >= 0) {
            parent = accepted;
            continue;
        }
        double total = 0.0;
        for (double mass : residual) total += mass;
        const uint32_t group = static_cast<uint32_t>(sample_weights(residual, total, uniform));
        emit(index.draw_member(group, q, uniform), group, true);
        return;
    }
}

void draw_group_codes(const GroupIndex& index, const StepInput& input, const StepOutput& output,
                      const UniformSource& uniform, int32_t* codes) {
    const int64_t vocab = index.vocab_size();
    for (size_t k = 0; k < output.accepted_nodes.size(); ++k) {
        const int32_t node = output.accepted_nodes[k];
        const uint32_t group = output.groups[k];
        codes[k] = index.group_size(group) < 2
                       ? input.tokens[node]
                       : static_cast<int32_t>(index.draw_member(group, input.target.at(input.parents[node] + 1, vocab), uniform));
    }
}

}  // namespace cadenza::pcg
