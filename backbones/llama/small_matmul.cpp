#include "small_matmul.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include <ATen/Parallel.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "small_matmul_kernel.h"

namespace cadenza::llama {
namespace {

// Weight bytes below which a projection stays on one thread: waking the
// other costs a few microseconds, about what 64 KiB take to stream.
constexpr int64_t parallel_weight_bytes = 64 << 10;

MatmulKernel choose_kernel() {
    if (const char* wanted = std::getenv("CADENZA_MATMUL_KERNEL")) {
        for (MatmulKernel kernel : {MatmulKernel::reference, MatmulKernel::avx2, MatmulKernel::avx512})
            if (std::strcmp(wanted, kernel_name(kernel)) == 0 && kernel_supported(kernel)) return kernel;
    }
    if (kernel_supported(MatmulKernel::avx512)) return MatmulKernel::avx512;
    if (kernel_supported(MatmulKernel::avx2)) return MatmulKernel::avx2;
    return MatmulKernel::reference;
}

at::Tensor reference_matmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    // One row: a matrix-vector product streams the weights faster than
    // OpenBLAS's sgemm does for m = 1.
    if (x.size(0) == 1) {
        at::Tensor y = at::mv(weight, x[0]).unsqueeze(0);
        return bias.defined() ? y + bias : y;
    }
    return at::linear(x, weight, bias);
}

}  // namespace

const char* kernel_name(MatmulKernel kernel) {
    switch (kernel) {
        case MatmulKernel::avx2: return "avx2";
        case MatmulKernel::avx512: return "avx512";
        default: return "reference";
    }
}

bool kernel_supported(MatmulKernel kernel) {
#if defined(__x86_64__) || defined(__i386__)
    switch (kernel) {
        case MatmulKernel::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case MatmulKernel::avx512: return __builtin_cpu_supports("avx512f");
        default: return true;
    }
#else
    return kernel == MatmulKernel::reference;
#endif
}

MatmulKernel best_matmul_kernel() {
    static const MatmulKernel best = choose_kernel();
    return best;
}

bool small_matmul_applies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
    auto plain = [](const at::Tensor& t) {
        return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided;
    };
    if (!plain(x) || !plain(weight) || x.dim() != 2 || weight.dim() != 2) return false;
    const int64_t in = weight.size(1), out = weight.size(0);
    if (x.size(1) != in || in == 0 || out == 0 || x.stride(1) != 1 || x.stride(0) < in || !weight.is_contiguous())
        return false;
    if (bias.defined() && (!plain(bias) || bias.dim() != 1 || bias.size(0) != out || !bias.is_contiguous()))
        return false;
    const bool grad = x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad());
    return !(grad && at::GradMode::is_enabled());
}

at::Tensor small_matmul(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, MatmulKernel kernel) {
    if (kernel == MatmulKernel::reference) return reference_matmul(x, weight, bias);
    if (!kernel_supported(kernel))
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, std::string("the ") + kernel_name(kernel) + " matmul kernel does not run on this CPU");
    if (!small_matmul_applies(x, weight, bias))
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "small_matmul: operands must be float32 CPU tensors x [m, in] (unit stride along in), "
                    "weight [out, in] and bias [out] contiguous, without autograd");
    const int64_t m = x.size(0), in = weight.size(1), out = weight.size(0);
    at::Tensor y = at::empty({m, out}, x.options());
    if (m == 0) return y;
    small_matmul_rows(kernel, x.data_ptr<float>(), m, x.stride(0), weight.data_ptr<float>(), out, in,
                      bias.defined() ? bias.data_ptr<float>() : nullptr, y.data_ptr<float>(), out);
    return y;
}

void small_matmul_rows(MatmulKernel kernel, const float* x, int64_t m, int64_t x_stride, const float* weight,
                       int64_t out, int64_t in, const float* bias, float* y, int64_t y_stride, bool split) {
    if (!kernel_supported(kernel))
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED,
                         std::string("small_matmul_rows: the ") + kernel_name(kernel) + " kernel does not run here");
    if (m <= 0 || out <= 0) return;
    if (kernel == MatmulKernel::reference) {
        // LibTorch's operators on views of the rows, the result copied into y's.
        auto* xs = const_cast<float*>(x);
        const at::Tensor result = reference_matmul(
            at::from_blob(xs, {m, in}, {x_stride, 1}, at::kFloat),
            at::from_blob(const_cast<float*>(weight), {out, in}, at::kFloat),
            bias ? at::from_blob(const_cast<float*>(bias), {out}, at::kFloat) : at::Tensor());
        at::from_blob(y, {m, out}, {y_stride, 1}, at::kFloat).copy_(result);
        return;
    }
    const auto rows = kernel == MatmulKernel::avx512 ? matmul_rows_avx512 : matmul_rows_avx2;
    if (!split) {
        rows(x, m, x_stride, weight, in, bias, y, y_stride, 0, out);
        return;
    }
    // Output columns split evenly between the intra-op threads.
    const int64_t grain = std::max<int64_t>(1, parallel_weight_bytes / (in * static_cast<int64_t>(sizeof(float))));
    at::parallel_for(0, out, grain,
                     [&](int64_t begin, int64_t end) { rows(x, m, x_stride, weight, in, bias, y, y_stride, begin, end); });
}

}  // namespace cadenza::llama
