// The frontends' use of host services beyond the SDK: the ids tensor and
// logging. Nothing here throws across the boundary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza::frontend {

// An int32 tensor of shape [n] holding `ids`, made by host->tensor_create_cpu.
DLManagedTensor* make_ids_tensor(const cdz_host_api& host, const std::vector<int32_t>& ids);

class PluginLog {
public:
    PluginLog(const cdz_host_api& host, const char* plugin_name) : host_(host), name_(plugin_name) {}
    bool enabled(cdz_log_level level) const noexcept;
    void write(cdz_log_level level, const std::string& message) const noexcept;

private:
    const cdz_host_api& host_;
    const char* name_;
};

}  // namespace cadenza::frontend
