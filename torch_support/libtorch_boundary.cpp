#include "libtorch_boundary.h"

#include <c10/util/Exception.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_tensor.hpp"

namespace cadenza::torch_support {

std::string describe_exception(const std::exception& error) {
    if (const auto* libtorch = dynamic_cast<const c10::Error*>(&error))
        return std::string("LibTorch: ") + libtorch->what_without_backtrace();
    return error.what();
}

DLManagedTensor* export_cpu_tensor(const at::Tensor& tensor, at::ScalarType dtype) {
    if (dtype != at::kFloat && dtype != at::kInt)
        throw sdk::Error(CDZ_STATUS_INTERNAL, "export_cpu_tensor: only float32 and int32 tensors are exported");
    at::Tensor owned = tensor.to(at::kCPU, dtype).contiguous();
    void* data = owned.data_ptr();
    std::vector<int64_t> shape(owned.sizes().begin(), owned.sizes().end());
    return sdk::export_tensor(std::move(owned), data, dtype == at::kFloat ? sdk::float32 : sdk::int32, std::move(shape));
}

}  // namespace cadenza::torch_support
