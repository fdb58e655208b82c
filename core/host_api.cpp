#include "host_api.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include <spdlog/spdlog.h>

#include "parameter_values.h"
#include "random_stream.h"
#include "sampling.h"
#include "status_object.h"

namespace cadenza {
namespace {

spdlog::level::level_enum to_spdlog(cdz_log_level level) {
    switch (level) {
        case CDZ_LOG_TRACE: return spdlog::level::trace;
        case CDZ_LOG_DEBUG: return spdlog::level::debug;
        case CDZ_LOG_INFO: return spdlog::level::info;
        case CDZ_LOG_WARN: return spdlog::level::warn;
        case CDZ_LOG_ERROR: return spdlog::level::err;
    }
    return spdlog::level::err;
}

void host_log(cdz_log_level level, const char* plugin_name, const char* message) noexcept {
    try {
        spdlog::log(to_spdlog(level), "[{}] {}", plugin_name ? plugin_name : "plugin",
                    message ? message : "");
    } catch (...) {
    }
}

int host_log_enabled(cdz_log_level level) noexcept {
    return spdlog::should_log(to_spdlog(level)) ? 1 : 0;
}

template <typename Read>
cdz_status* read_parameter(const cdz_params* params, const char* key, cdz_param_type type,
                           void* out, Read&& read) noexcept {
    return status_from_exceptions([&] {
        if (!params || !out) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "params or output is NULL");
        read(parameter_lookup(*params, key, type));
    });
}

cdz_status* get_bool(const cdz_params* params, const char* key, int* out) noexcept {
    return read_parameter(params, key, CDZ_PARAM_BOOL, out,
                          [&](const ParameterValue& v) { *out = v.boolean ? 1 : 0; });
}

cdz_status* get_int(const cdz_params* params, const char* key, int64_t* out) noexcept {
    return read_parameter(params, key, CDZ_PARAM_INT, out,
                          [&](const ParameterValue& v) { *out = v.integer; });
}

cdz_status* get_float(const cdz_params* params, const char* key, double* out) noexcept {
    return read_parameter(params, key, CDZ_PARAM_FLOAT, out,
                          [&](const ParameterValue& v) { *out = v.number; });
}

cdz_status* get_string(const cdz_params* params, const char* key, const char** out) noexcept {
    return read_parameter(params, key, CDZ_PARAM_STRING, out,
                          [&](const ParameterValue& v) { *out = v.text.c_str(); });
}

cdz_status* get_int_array(const cdz_params* params, const char* key, const int64_t** data,
                          size_t* count) noexcept {
    return read_parameter(params, key, CDZ_PARAM_INT_ARRAY, data, [&](const ParameterValue& v) {
        if (!count) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "count is NULL");
        *data = v.integers.data();
        *count = v.integers.size();
    });
}

cdz_status* get_float_array(const cdz_params* params, const char* key, const double** data,
                            size_t* count) noexcept {
    return read_parameter(params, key, CDZ_PARAM_FLOAT_ARRAY, data, [&](const ParameterValue& v) {
        if (!count) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "count is NULL");
        *data = v.numbers.data();
        *count = v.numbers.size();
    });
}

cdz_status* get_string_array(const cdz_params* params, const char* key, const char* const** data,
                             size_t* count) noexcept {
    return read_parameter(params, key, CDZ_PARAM_STRING_ARRAY, data, [&](const ParameterValue& v) {
        if (!count) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "count is NULL");
        *data = v.text_views.data();
        *count = v.text_views.size();
    });
}

uint64_t rng_next(cdz_rng* rng) noexcept { return rng ? random_stream_next(*rng) : 0; }
double rng_uniform(cdz_rng* rng) noexcept { return rng ? random_stream_uniform(*rng) : 0.0; }

cdz_status* host_sampling_probabilities(const cdz_sampling* sampling, const float* logits,
                                        float* probabilities, int64_t count) noexcept {
    return status_from_exceptions([&] {
        if (!sampling || !logits || !probabilities)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling, logits or probabilities is NULL");
        sampling_probabilities(*sampling, logits, probabilities, count);
    });
}

cdz_status* host_sampling_nucleus(const cdz_sampling* sampling, float* probabilities, int64_t count) noexcept {
    return status_from_exceptions([&] {
        if (!sampling || !probabilities) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling or probabilities is NULL");
        keep_sampling_nucleus(*sampling, probabilities, count);
    });
}

int64_t host_sample_index(cdz_rng* rng, const float* probabilities, int64_t count) noexcept {
    if (!rng || !probabilities || count <= 0) return -1;
    return sample_index(*rng, probabilities, count);
}

struct CpuTensor {
    DLManagedTensor managed;
    std::vector<int64_t> shape;
    void* data;
};

void delete_cpu_tensor(DLManagedTensor* self) noexcept {
    auto* tensor = static_cast<CpuTensor*>(self->manager_ctx);
    std::free(tensor->data);
    delete tensor;
}

DLManagedTensor* tensor_create_cpu(DLDataType dtype, const int64_t* shape, int32_t ndim) noexcept {
    try {
        if (ndim < 0 || (ndim > 0 && !shape) || dtype.bits % 8 != 0 || dtype.lanes == 0) return nullptr;
        size_t elements = 1;
        for (int32_t i = 0; i < ndim; ++i) {
            if (shape[i] < 0) return nullptr;
            elements *= static_cast<size_t>(shape[i]);
        }
        const size_t bytes = elements * (dtype.bits / 8) * dtype.lanes;
        auto* tensor = new CpuTensor{};
        tensor->shape.assign(shape, shape + ndim);
        tensor->data = std::calloc(bytes > 0 ? bytes : 1, 1);
        if (!tensor->data) {
            delete tensor;
            return nullptr;
        }
        DLTensor& dl = tensor->managed.dl_tensor;
        dl.data = tensor->data;
        dl.device = DLDevice{kDLCPU, 0};
        dl.ndim = ndim;
        dl.dtype = dtype;
        dl.shape = tensor->shape.data();
        dl.strides = nullptr;
        dl.byte_offset = 0;
        tensor->managed.manager_ctx = tensor;
        tensor->managed.deleter = delete_cpu_tensor;
        return &tensor->managed;
    } catch (...) {
        return nullptr;
    }
}

cdz_status_code host_status_code(const cdz_status* status) noexcept { return status ? status->code : CDZ_STATUS_OK; }
const char* host_status_message(const cdz_status* status) noexcept { return status ? status->message.c_str() : ""; }

const cdz_host_api host_table = {
    sizeof(cdz_host_api),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    status_create,
    host_log,
    host_log_enabled,
    get_bool,
    get_int,
    get_float,
    get_string,
    get_int_array,
    get_float_array,
    get_string_array,
    rng_next,
    rng_uniform,
    host_sampling_probabilities,
    host_sample_index,
    tensor_create_cpu,
    host_status_code,
    host_status_message,
    status_release,
    host_sampling_nucleus,
};

}  // namespace

const cdz_host_api* host_api() { return &host_table; }

}  // namespace cadenza
