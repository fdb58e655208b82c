#include "frontend_common/host_bridge.h"

#include <cstddef>
#include <cstring>
#include <new>
#include <string>

#include "frontend_common/frontend_error.h"

namespace cadenza::frontend {
namespace {

// The host table must reach the last member these plugins call.
constexpr size_t required_host_size = offsetof(cdz_host_api, tensor_create_cpu) + sizeof(void*);

}  // namespace

const char* host_incompatibility(const cdz_host_api* host) noexcept {
    if (!host) return "the host table is NULL";
    if (host->abi_major != CDZ_PLUGIN_ABI_MAJOR) return "the host speaks another major plugin ABI";
    if (host->struct_size < required_host_size) return "the host table is older than this plugin";
    if (!host->status_create || !host->log || !host->log_enabled || !host->params_get_bool ||
        !host->params_get_string || !host->tensor_create_cpu)
        return "the host table lacks a function this plugin calls";
    return nullptr;
}

cdz_status* enter_plugin(const cdz_host_api* host, cdz_plugin_list* out,
                         const cdz_plugin_descriptor* const* descriptors, uint32_t count,
                         const cdz_host_api** stored_host) noexcept {
    const char* problem = host_incompatibility(host);
    if (!problem && !out) problem = "the plugin list is NULL";
    if (problem) {
        // status_create sits at the same place in every version of the table.
        const bool can_report = host && host->struct_size >= offsetof(cdz_host_api, status_create) + sizeof(void*) &&
                                host->status_create;
        return can_report ? host->status_create(CDZ_STATUS_ABI_MISMATCH, problem) : nullptr;
    }
    *stored_host = host;
    out->struct_size = sizeof(cdz_plugin_list);
    out->descriptors = descriptors;
    out->count = count;
    return nullptr;
}

cdz_status* status_from_current_exception(const cdz_host_api* host) noexcept {
    if (!host || !host->status_create) return nullptr;
    try {
        throw;
    } catch (HostStatus& status) {
        return status.release();
    } catch (const FrontendError& error) {
        return host->status_create(error.code(), error.what());
    } catch (const std::bad_alloc&) {
        return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& error) {
        return host->status_create(CDZ_STATUS_INTERNAL, (std::string("internal error: ") + error.what()).c_str());
    } catch (...) {
        return host->status_create(CDZ_STATUS_INTERNAL, "internal error: unknown exception");
    }
}

bool ParamReader::get_bool(const char* key) const {
    int value = 0;
    if (cdz_status* status = host_.params_get_bool(params_, key, &value)) throw HostStatus(status);
    return value != 0;
}

std::string ParamReader::get_string(const char* key) const {
    const char* value = nullptr;
    if (cdz_status* status = host_.params_get_string(params_, key, &value)) throw HostStatus(status);
    if (!value) throw FrontendError(CDZ_STATUS_INTERNAL, std::string("the host returned no value for parameter ") + key);
    return value;
}

DLManagedTensor* make_ids_tensor(const cdz_host_api& host, const std::vector<int32_t>& ids) {
    const DLDataType int32{kDLInt, 32, 1};
    const int64_t shape[1] = {static_cast<int64_t>(ids.size())};
    DLManagedTensor* tensor = host.tensor_create_cpu(int32, shape, 1);
    if (!tensor) throw FrontendError(CDZ_STATUS_OUT_OF_MEMORY, "the host could not allocate the ids tensor");
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
