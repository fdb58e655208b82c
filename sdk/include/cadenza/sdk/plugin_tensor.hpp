// cadenza plugin SDK: tensors across the C ABI as DLPack. Outgoing, a
// DLManagedTensor that owns what keeps its data alive and frees it in its
// deleter; incoming, a checked view of a DLTensor the host lends for a call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::sdk {

constexpr DLDataType float32{kDLFloat, 32, 1};
constexpr DLDataType int32{kDLInt, 32, 1};
constexpr DLDataType int64{kDLInt, 64, 1};

constexpr bool same_dtype(DLDataType a, DLDataType b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

// A row-major CPU tensor over the data of `owner`, which the deleter destroys.
template <typename Owner>
struct ExportedTensor {
    DLManagedTensor managed{};
    Owner owner;
    std::vector<int64_t> shape;
};

// Hands `owner` (a std::vector, an at::Tensor: anything whose data stays put
// when it is moved) to the other side as a DLManagedTensor whose deleter,
// called once by the receiver, destroys it. `data` points into owner.
template <typename Owner>
DLManagedTensor* export_tensor(Owner owner, void* data, DLDataType dtype, std::vector<int64_t> shape) {
    using Exported = ExportedTensor<Owner>;
    auto exported = std::make_unique<Exported>();
    exported->owner = std::move(owner);
    exported->shape = std::move(shape);
    DLTensor& dl = exported->managed.dl_tensor;
    dl.data = data;
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(exported->shape.size());
    dl.dtype = dtype;
    dl.shape = exported->shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
    exported->managed.manager_ctx = exported.get();
    exported->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
    return &exported.release()->managed;
}

// What a function accepts of an incoming tensor: its rank and dtypes, and
// how a message says it ("int32 [codebooks, frames]").
struct TensorSpec {
    int32_t ndim;
    std::vector<DLDataType> dtypes;
    const char* description;
};

// A tensor lent for one call, checked against a spec: on the CPU, of an
// accepted rank and dtype, sizes not negative, row-major contiguous, with
// data when it has elements. Each failure is INVALID_ARGUMENT naming `what`.
class TensorView {
public:
    TensorView(const DLTensor* tensor, const std::string& what, const TensorSpec& spec) : tensor_(tensor) {
        auto fail = [&](const std::string& problem) { throw Error(CDZ_STATUS_INVALID_ARGUMENT, what + problem); };
        if (!tensor) fail(" is NULL");
        if (tensor->device.device_type != kDLCPU) fail(" must be a CPU tensor");
        bool dtype_ok = false;
        for (DLDataType dtype : spec.dtypes) dtype_ok = dtype_ok || same_dtype(tensor->dtype, dtype);
        if (tensor->ndim != spec.ndim || !dtype_ok) fail(std::string(" must be ") + spec.description);
        shape_.assign(tensor->shape, tensor->shape + tensor->ndim);
        for (int64_t size : shape_) {
            if (size < 0) fail(" has a negative size");
            element_count_ *= size;
        }
        if (tensor->strides) {
            int64_t stride = 1;
            for (int32_t d = tensor->ndim - 1; d >= 0; --d) {
                if (shape_[d] > 1 && tensor->strides[d] != stride) fail(" must be contiguous");
                stride *= shape_[d];
            }
        }
        if (element_count_ > 0 && !tensor->data) fail(" has no data");
    }

    DLDataType dtype() const { return tensor_->dtype; }
    const std::vector<int64_t>& shape() const { return shape_; }
    int64_t element_count() const { return element_count_; }
    const void* data() const { return static_cast<const char*>(tensor_->data) + tensor_->byte_offset; }
    template <typename T>
    const T* data_as() const {
        return static_cast<const T*>(data());
    }

private:
    const DLTensor* tensor_;
    std::vector<int64_t> shape_;
    int64_t element_count_ = 1;
};

}  // namespace cadenza::sdk
