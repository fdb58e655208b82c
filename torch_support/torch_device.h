// The device a pipeline names ("cpu", "cuda", "cuda:N") as a LibTorch device,
// refused with one line when it is malformed or this LibTorch cannot reach
// it (LibTorch's own error lists every dispatcher backend: 74 lines).
#pragma once

#include <string>

#include <c10/core/Device.h>

namespace cadenza {

c10::Device torch_device(const std::string& name);

}  // namespace cadenza
