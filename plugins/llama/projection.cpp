#include "projection.h"

namespace cadenza::llama {

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    // One row: a matrix-vector product streams the weights faster than
    // OpenBLAS's sgemm does for m = 1.
    if (x.size(0) == 1) {
        at::Tensor y = at::mv(weight, x[0]).unsqueeze(0);
        return bias.defined() ? y + bias : y;
    }
    return at::linear(x, weight, bias);
}

}  // namespace cadenza::llama
