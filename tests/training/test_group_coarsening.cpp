// Training's coarse distributions (training/group_coarsening.h) are the ones
// acceptor.pcg judges by (acceptors/pcg/pcg_sampler.h, GroupIndex::coarse),
// including the singleton groups of tokens no group holds, and their
// gradient reaches the rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "error.h"
#include "group_coarsening.h"
#include "pcg_sampler.h"

namespace cadenza::training {
namespace {

pcg::TokenGroups overlapping_groups() {
    pcg::TokenGroups groups;
    groups.vocab_size = 12;
    groups.add_group({0, 1, 2});
    groups.add_group({2, 3});
    groups.add_group({1, 2, 5, 9});
    groups.add_group({7, 8});
    return groups;  // 4, 6, 10, 11 in no group
}

TEST(GroupCoarsening, EqualsTheAcceptorsCoarseDistributions) {
    const pcg::TokenGroups groups = overlapping_groups();
    const GroupCoarsening coarsening(groups, 12, "test groups");
    const pcg::GroupIndex index(groups);
    ASSERT_EQ(coarsening.group_count(), static_cast<int64_t>(index.group_count()));

    at::manual_seed(5);
    const at::Tensor p = at::softmax(at::randn({6, 12}) * 2, -1);
    const at::Tensor q = at::softmax(at::randn({6, 12}) * 2, -1);
    const at::Tensor coarse_p = coarsening.coarse(p), coarse_q = coarsening.coarse(q);
    const at::Tensor accepted = coarsening.acceptance(p, q);
    for (int64_t r = 0; r < p.size(0); ++r) {
        const at::Tensor p_row = p[r].contiguous(), q_row = q[r].contiguous();
        double expected_acceptance = 0;
        for (size_t k = 0; k < index.group_count(); ++k) {
            const double expected_p = index.coarse(k, p_row.data_ptr<float>());
            const double expected_q = index.coarse(k, q_row.data_ptr<float>());
            EXPECT_NEAR(coarse_p[r][static_cast<int64_t>(k)].item<double>(), expected_p, 1e-6) << "row " << r << " group " << k;
            EXPECT_NEAR(coarse_q[r][static_cast<int64_t>(k)].item<double>(), expected_q, 1e-6);
            expected_acceptance += std::min(expected_p, expected_q);
        }
        EXPECT_NEAR(accepted[r].item<double>(), expected_acceptance, 1e-5);
        EXPECT_NEAR(coarse_p[r].sum().item<double>(), 1.0, 1e-5);
    }
    // Groups only help: never below the token-level acceptance, equal for identical rows.
    EXPECT_TRUE((accepted >= at::minimum(p, q).sum(-1) - 1e-6).all().item<bool>());
    EXPECT_NEAR(coarsening.acceptance(p, p).mean().item<double>(), 1.0, 1e-5);
}

TEST(GroupCoarsening, ItsAcceptanceHasAGradientInTheDraft) {
    const GroupCoarsening coarsening(overlapping_groups(), 12, "test groups");
    at::manual_seed(6);
    const at::Tensor p = at::softmax(at::randn({3, 12}), -1);
    at::Tensor logits = at::randn({3, 12}).requires_grad_(true);
    const at::Tensor loss = (1.0 - coarsening.acceptance(p, at::softmax(logits, -1))).mean();
    loss.backward();
    ASSERT_TRUE(logits.grad().defined());
    EXPECT_GT(logits.grad().abs().sum().item<double>(), 0.0);
}

TEST(GroupCoarsening, RefusesGroupsOverAnotherVocabulary) {
    try {
        GroupCoarsening(overlapping_groups(), 13, "groups.cdzgrp");
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("groups.cdzgrp: the groups are over a vocabulary of 12 tokens, the target's has 13"),
                  std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace cadenza::training
