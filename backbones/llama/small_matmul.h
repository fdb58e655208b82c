// y[m, out] = x[m, in] W[out, in]^T (+ b) for a few rows of x: the shape of
// one decoding step (m = 1) or one verification batch (m = a few nodes).
// OpenBLAS's sgemm streams the weights at a third of the memory bandwidth for
// such m and is slower still at odd m; these kernels read each weight row
// once for all m rows of x (held in L1/L2), split the output rows across
// LibTorch's intra-op threads and accumulate in float32, like at::linear.
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

namespace cadenza::llama {

enum class MatmulKernel {
    reference,  // at::mv for one row, at::linear otherwise (any CPU)
    avx2,       // AVX2 + FMA, 8 lanes
    avx512,     // AVX-512F, 16 lanes
};

const char* kernel_name(MatmulKernel kernel);
// Whether this CPU runs `kernel` (and this build has it).
bool kernel_supported(MatmulKernel kernel);
// The fastest supported kernel: avx512, else avx2, else reference. The
// environment variable CADENZA_MATMUL_KERNEL (reference, avx2, avx512)
// overrides it when that kernel is supported; read once.
MatmulKernel best_matmul_kernel();

// Whether the kernels take these operands: float32 CPU tensors, x [m, in]
// with unit stride along in, weight [out, in] contiguous, bias [out]
// contiguous or undefined, and no autograd to record.
bool small_matmul_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// x W^T + b with `kernel`, for any m: more than 8 rows go in groups of at
// most 8 over tiles of 8 weight rows, so that the weights still stream from
// memory once. Operands as small_matmul_applies requires for avx2 and avx512.
// Throws cadenza::sdk::Error when the kernel is unsupported.
at::Tensor small_matmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, MatmulKernel kernel);

// The same on raw float32 rows, for callers that keep their own buffers:
// y[i, o] = x_i . weight_o (+ bias[o]) for i < m, o < out, x row i at
// x + i * x_stride, y row i at y + i * y_stride, weight [out, in] contiguous.
// `split` spreads the output columns over LibTorch's intra-op threads when
// the weights are large enough to pay for waking them. The reference kernel
// runs LibTorch's operators on views of the rows (any CPU). Throws
// cadenza::sdk::Error for a kernel this CPU does not run.
void small_matmul_rows(MatmulKernel kernel, const float* x, int64_t m, int64_t x_stride, const float* weight,
                       int64_t out, int64_t in, const float* bias, float* y, int64_t y_stride, bool split = true);

}  // namespace cadenza::llama
