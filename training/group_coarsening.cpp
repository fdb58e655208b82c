#include "group_coarsening.h"

#include <vector>

#include "error.h"

namespace cadenza::training {

GroupCoarsening::GroupCoarsening(const pcg::TokenGroups& groups, int64_t vocab_size, const std::string& where) {
    if (static_cast<int64_t>(groups.vocab_size) != vocab_size)
        throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": the groups are over a vocabulary of " +
                                                  std::to_string(groups.vocab_size) + " tokens, the target's has " +
                                                  std::to_string(vocab_size));
    std::vector<int64_t> memberships(static_cast<size_t>(vocab_size), 0);
    for (uint32_t token : groups.members) ++memberships[token];

    std::vector<int64_t> rows, columns;
    std::vector<float> values;
    int64_t group = 0;
    for (size_t k = 0; k < groups.group_count(); ++k, ++group)
        for (size_t i = 0; i < groups.group_size(k); ++i) {
            const uint32_t token = groups.group_begin(k)[i];
            rows.push_back(group);
            columns.push_back(token);
            values.push_back(1.0f / static_cast<float>(memberships[token]));
        }
    for (int64_t token = 0; token < vocab_size; ++token)
        if (memberships[static_cast<size_t>(token)] == 0) {
            rows.push_back(group++);
            columns.push_back(token);
            values.push_back(1.0f);
        }
    group_count_ = group;

    const auto count = static_cast<int64_t>(values.size());
    at::Tensor indices = at::empty({2, count}, at::kLong);
    std::copy(rows.begin(), rows.end(), indices[0].data_ptr<int64_t>());
    std::copy(columns.begin(), columns.end(), indices[1].data_ptr<int64_t>());
    const at::Tensor weights = at::from_blob(values.data(), {count}, at::kFloat).clone();
    transposed_map_ = at::sparse_coo_tensor(indices, weights, {group_count_, vocab_size}).coalesce();
}

at::Tensor GroupCoarsening::coarse(const at::Tensor& distributions) const {
    // [G, V] x [V, N] -> [G, N]: the sparse operand first, as ATen's CPU
    // kernel wants it, and the dense one contiguous (each membership then
    // adds one contiguous row: 8x faster than through the transposed view);
    // the gradient reaches `distributions` through both.
    return at::mm(transposed_map_, distributions.t().contiguous()).t();
}

at::Tensor GroupCoarsening::acceptance(const at::Tensor& p, const at::Tensor& q) const {
    return at::minimum(coarse(p), coarse(q)).sum(-1);
}

}  // namespace cadenza::training
