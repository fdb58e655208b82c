// What the LibTorch plugins need at the C ABI boundary beyond the SDK:
// LibTorch's errors as messages, and a LibTorch tensor handed to the host as DLPack.
#pragma once

#include <exception>
#include <string>

#include <ATen/core/Tensor.h>
#include <dlpack/dlpack.h>

namespace cadenza::torch_support {

// sdk::ExceptionDescriber for a LibTorch plugin: a c10::Error as "LibTorch:
// <message>" without the backtrace its what() carries, any other what() as is.
std::string describe_exception(const std::exception& error);

// `tensor` on the CPU as `dtype` (at::kFloat or at::kInt), contiguous, lent
// to the host without a copy when it already is; the deleter releases it.
DLManagedTensor* export_cpu_tensor(const at::Tensor& tensor, at::ScalarType dtype);

}  // namespace cadenza::torch_support
