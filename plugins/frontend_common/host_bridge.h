// The frontends' side of the C ABI: checking the host table, turning C++
// exceptions into cdz_status, reading parameters, making the ids tensor and
// logging. Nothing here throws across the boundary.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza::frontend {

// Thrown to hand a status the host made (a params_get_* failure) back to the
// host unchanged; host_bridge is its only catcher.
class HostStatus {
public:
    explicit HostStatus(cdz_status* status) : status_(status) {}
    cdz_status* release() noexcept {
        cdz_status* status = status_;
        status_ = nullptr;
        return status;
    }

private:
    cdz_status* status_;
};

// NULL when `host` can serve these plugins, otherwise why not.
const char* host_incompatibility(const cdz_host_api* host) noexcept;

// The body of cdz_plugin_entry: checks the host, stores it in `*stored_host`
// and lists the `count` static descriptors.
cdz_status* enter_plugin(const cdz_host_api* host, cdz_plugin_list* out,
                         const cdz_plugin_descriptor* const* descriptors, uint32_t count,
                         const cdz_host_api** stored_host) noexcept;

// Converts the exception being handled (call inside catch (...)).
cdz_status* status_from_current_exception(const cdz_host_api* host) noexcept;

// Runs `body`; any exception becomes a status made by `host`.
template <typename Body>
cdz_status* guarded(const cdz_host_api* host, Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (...) {
        return status_from_current_exception(host);
    }
}

// Typed access to a validated cdz_params; a failure throws HostStatus.
class ParamReader {
public:
    ParamReader(const cdz_host_api& host, const cdz_params* params) : host_(host), params_(params) {}
    bool get_bool(const char* key) const;
    std::string get_string(const char* key) const;  // STRING and PATH

private:
    const cdz_host_api& host_;
    const cdz_params* params_;
};

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
