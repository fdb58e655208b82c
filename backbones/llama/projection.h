// y = x W^T (+ b) for the inference path, where x has few rows: the shape
// of one decoding step or one verification batch. Kept apart so that the
// small-row fast path lives in one place.
#pragma once

#include <ATen/ATen.h>

namespace cadenza::llama {

// x: [m, in]; weight: [out, in]; bias: [out] or undefined.
at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias = {});

}  // namespace cadenza::llama
