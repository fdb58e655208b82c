// PCG's coarse distributions (Yanuka et al., Eq. 3-5) as a linear map, for
// drafts trained against the acceptance acceptor.pcg actually grants: a
// token's mass splits equally over the groups that hold it,
//   P_c(G_k) = sum_{t in G_k} p(t) / N(t),   N(t) = |{k : t in G_k}|,
// tokens in no group being their own singleton group, as in
// acceptors/pcg/pcg_sampler.h. The group acceptance of a draft q against the
// target p is sum_k min(P_c(G_k), Q_c(G_k)): the probability that PCG keeps
// the draft's token (its Eq. 7 accepts group K ~ Q_c with probability
// min(1, P_c(K) / Q_c(K))).
#pragma once

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "token_groups.h"

namespace cadenza::training {

class GroupCoarsening {
public:
    // Throws Error (INVALID_CONFIG) when the groups' vocabulary differs from `vocab_size`.
    GroupCoarsening(const pcg::TokenGroups& groups, int64_t vocab_size, const std::string& where);

    // Distributions [N, V] -> coarse distributions [N, G], each row summing
    // to its input row's sum; differentiable in `distributions`.
    at::Tensor coarse(const at::Tensor& distributions) const;
    // sum_k min(P_c(k), Q_c(k)) per row [N], for target rows p and draft rows q [N, V].
    at::Tensor acceptance(const at::Tensor& p, const at::Tensor& q) const;

    int64_t group_count() const { return group_count_; }  // the file's groups and the singletons

private:
    int64_t group_count_ = 0;
    at::Tensor transposed_map_;  // sparse [G, V]: entry (k, t) = 1 / N(t) for t in G_k
};

}  // namespace cadenza::training
