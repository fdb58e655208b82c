#include "torch_device.h"

#include <optional>

#include <ATen/Context.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza {

c10::Device torch_device(const std::string& name) {
    std::optional<c10::Device> device;
    try {
        device.emplace(name);
    } catch (const c10::Error&) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "device '" + name + "' is not a device (cpu, cuda, cuda:N)");
    }
    if (device->is_cuda() && !at::hasCUDA())
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "device '" + name + "': this LibTorch has no CUDA support");
    if (device->is_cuda() && device->has_index() && device->index() >= at::getNumGPUs())
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "device '" + name + "': this machine has " +
                                                std::to_string(at::getNumGPUs()) + " CUDA device(s)");
    return *device;
}

}  // namespace cadenza
