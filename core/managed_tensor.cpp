#include "managed_tensor.h"

#include "error.h"

namespace cadenza {

std::vector<int64_t> ManagedTensor::expect(DLDataTypeCode code, uint8_t bits, int32_t ndim,
                                           const std::string& what) const {
    if (!tensor_) throw Error(CDZ_STATUS_INTERNAL, what + ": no tensor was returned");
    const DLTensor& t = tensor_->dl_tensor;
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
        throw Error(CDZ_STATUS_UNSUPPORTED, what + ": expected a CPU tensor");
    if (t.dtype.code != code || t.dtype.bits != bits || t.dtype.lanes != 1)
        throw Error(CDZ_STATUS_INTERNAL, what + ": unexpected element type");
    if (t.ndim != ndim) throw Error(CDZ_STATUS_INTERNAL, what + ": expected " + std::to_string(ndim) + " dimensions");
    std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
    if (t.strides) {
        int64_t expected_stride = 1;
        for (int32_t d = ndim - 1; d >= 0; --d) {
            if (shape[d] > 1 && t.strides[d] != expected_stride)
                throw Error(CDZ_STATUS_UNSUPPORTED, what + ": expected a contiguous tensor");
            expected_stride *= shape[d];
        }
    }
    return shape;
}

TensorView::TensorView(const void* data, DLDataType dtype, std::vector<int64_t> dims) : shape(std::move(dims)) {
    tensor.data = const_cast<void*>(data);
    tensor.device = DLDevice{kDLCPU, 0};
    tensor.ndim = static_cast<int32_t>(shape.size());
    tensor.dtype = dtype;
    tensor.shape = shape.data();
    tensor.strides = nullptr;
    tensor.byte_offset = 0;
}

}  // namespace cadenza
