#include "host_bridge.h"

#include <cstring>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::frontend {

DLManagedTensor* make_ids_tensor(const cdz_host_api& host, const std::vector<int32_t>& ids) {
    const DLDataType int32{kDLInt, 32, 1};
    const int64_t shape[1] = {static_cast<int64_t>(ids.size())};
    DLManagedTensor* tensor = host.tensor_create_cpu(int32, shape, 1);
    if (!tensor) throw sdk::Error(CDZ_STATUS_OUT_OF_MEMORY, "the host could not allocate the ids tensor");
    if (!ids.empty()) {
        auto* data = static_cast<unsigned char*>(tensor->dl_tensor.data) + tensor->dl_tensor.byte_offset;
        std::memcpy(data, ids.data(), ids.size() * sizeof(int32_t));
    }
    return tensor;
}

bool PluginLog::enabled(cdz_log_level level) const noexcept { return host_.log_enabled(level) != 0; }

void PluginLog::write(cdz_log_level level, const std::string& message) const noexcept {
    host_.log(level, name_, message.c_str());
}

}  // namespace cadenza::frontend
