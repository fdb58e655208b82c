// The trainable weights of a code-digit output head (drafts/common/
// code_digit_head.h), shared by the draft heads and the shallow draft.
#pragma once

#include <ATen/ATen.h>

#include "code_digit_head.h"

namespace cadenza::training {

struct CodeDigitOutput {
    at::Tensor weight;  // [R, H]
    at::Tensor bias;    // [R]

    // The factorized form of a target's output table [V, H]: a class row is
    // its token's row (the code class the codes' mean, with bias log(codes)
    // for the codes' number), digit d's row for value k the mean over the
    // codes with that digit of their deviation from the codes' mean. A head
    // starting there ranks codes roughly as the table does.
    static CodeDigitOutput from_table(const at::Tensor& table, const drafts::CodeGrid& grid);
};

}  // namespace cadenza::training
