#include "code_digit_output.h"

#include <cmath>
#include <vector>

#include "error.h"

namespace cadenza::training {

CodeDigitOutput CodeDigitOutput::from_table(const at::Tensor& target_table, const drafts::CodeGrid& grid) {
    const at::Tensor table = target_table.detach().to(at::kCPU, at::kFloat);
    const int64_t vocab = table.size(0), hidden = table.size(1);
    if (vocab != grid.vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "code digits: the grid is for " + std::to_string(grid.vocab_size) +
                                                     " tokens, the target has " + std::to_string(vocab));
    const int64_t offset = grid.code_offset, count = grid.code_count();
    const at::Tensor codes = table.narrow(0, offset, count);
    const at::Tensor mean = codes.mean(0);
    std::vector<at::Tensor> rows{table.narrow(0, 0, offset), table.narrow(0, offset + count, vocab - offset - count),
                                 mean.unsqueeze(0)};
    std::vector<int64_t> shape;  // most significant digit first, as the codes are numbered
    for (size_t d = grid.levels.size(); d-- > 0;) shape.push_back(grid.levels[d]);
    shape.push_back(hidden);
    const at::Tensor deviation = (codes - mean).reshape(shape);
    const auto digits = static_cast<int64_t>(grid.levels.size());
    for (int64_t d = 0; d < digits; ++d) {
        std::vector<int64_t> others;
        for (int64_t axis = 0; axis < digits; ++axis)
            if (axis != digits - 1 - d) others.push_back(axis);
        rows.push_back(others.empty() ? deviation : deviation.mean(others));
    }
    const at::Tensor weight = at::cat(rows, 0).contiguous();
    at::Tensor bias = at::zeros({grid.head_rows()}, at::kFloat);
    bias[grid.class_count() - 1] = std::log(static_cast<double>(count));
    return {weight, bias};
}

}  // namespace cadenza::training
