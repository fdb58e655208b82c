// Owns a DLManagedTensor received from a plugin and releases it through the
// producer's own deleter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

namespace cadenza {

class ManagedTensor {
public:
    ManagedTensor() = default;
    explicit ManagedTensor(DLManagedTensor* tensor) : tensor_(tensor) {}
    ~ManagedTensor() { reset(); }
    ManagedTensor(ManagedTensor&& other) noexcept : tensor_(other.tensor_) { other.tensor_ = nullptr; }
    ManagedTensor& operator=(ManagedTensor&& other) noexcept {
        if (this != &other) {
            reset();
            tensor_ = other.tensor_;
            other.tensor_ = nullptr;
        }
        return *this;
    }
    ManagedTensor(const ManagedTensor&) = delete;
    ManagedTensor& operator=(const ManagedTensor&) = delete;

    void reset() {
        if (tensor_ && tensor_->deleter) tensor_->deleter(tensor_);
        tensor_ = nullptr;
    }
    DLManagedTensor* get() const { return tensor_; }
    DLManagedTensor** out() {
        reset();
        return &tensor_;
    }
    explicit operator bool() const { return tensor_ != nullptr; }
    const DLTensor& dl() const { return tensor_->dl_tensor; }

    // Checks that the tensor is a contiguous CPU tensor of the given element
    // type and rank; returns its shape. Throws cadenza::Error naming `what`.
    std::vector<int64_t> expect(DLDataTypeCode code, uint8_t bits, int32_t ndim, const std::string& what) const;

    template <typename T>
    const T* data() const {
        return reinterpret_cast<const T*>(static_cast<const char*>(tensor_->dl_tensor.data) +
                                          tensor_->dl_tensor.byte_offset);
    }
    // For a tensor handed over to the host, which owns it (a backbone's logits).
    template <typename T>
    T* mutable_data() {
        return reinterpret_cast<T*>(static_cast<char*>(tensor_->dl_tensor.data) + tensor_->dl_tensor.byte_offset);
    }

private:
    DLManagedTensor* tensor_ = nullptr;
};

// A non-owning DLTensor over host memory, for handing buffers to plugins.
struct TensorView {
    DLTensor tensor{};
    std::vector<int64_t> shape;
    TensorView(const void* data, DLDataType dtype, std::vector<int64_t> dims);
    TensorView(const TensorView&) = delete;
    TensorView& operator=(const TensorView&) = delete;
    const DLTensor* get() const { return &tensor; }
};

}  // namespace cadenza
