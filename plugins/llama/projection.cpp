#include "projection.h"

#include "small_matmul.h"

namespace cadenza::llama {

at::Tensor project(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    // Few rows: the small-m kernel streams each weight row once for all of
    // them (OpenBLAS's sgemm reads the weights at a third of the memory
    // bandwidth for such m). Otherwise, or on a CPU without AVX2, the
    // reference: at::mv for one row, at::linear for more.
    static const MatmulKernel kernel = best_matmul_kernel();
    if (kernel != MatmulKernel::reference && x.dim() == 2 && x.size(0) <= small_matmul_max_rows &&
        small_matmul_applies(x, weight, bias))
        return small_matmul(x, weight, bias, kernel);
    return small_matmul(x, weight, bias, MatmulKernel::reference);
}

}  // namespace cadenza::llama
