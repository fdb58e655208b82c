#include "codec_plugin_glue.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "torch_device.h"

namespace cadenza::codec_plugin {

namespace {

const cdz_host_api* host = nullptr;

struct Codec {
    std::string name;
    std::unique_ptr<MonoCodec> model;
    cdz_codec_info info{};
};

struct Stream {
    const Codec* codec;
    std::unique_ptr<MonoDecodeStream> decoder;
};

template <typename Body>
cdz_status* guarded(const std::string& name, Body&& body) noexcept {
    auto fail = [&](cdz_status_code code, const std::string& message) {
        return host->status_create(code, (name + ": " + message).c_str());
    };
    try {
        c10::InferenceMode inference;
        body();
        return nullptr;
    } catch (const sdk::Error& e) {
        return fail(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    } catch (const c10::Error& e) {
        return fail(CDZ_STATUS_INTERNAL, std::string("LibTorch: ") + e.what_without_backtrace());
    } catch (const std::exception& e) {
        return fail(CDZ_STATUS_INTERNAL, e.what());
    } catch (...) {
        return fail(CDZ_STATUS_INTERNAL, "unknown exception");
    }
}

void throw_if_error(cdz_status* status) {
    if (!status) return;
    const cdz_status_code code = host->status_code(status);
    const std::string message = host->status_message(status);
    host->status_release(status);
    throw sdk::Error(code, message);
}

// A copy of a caller's CPU tensor: float32 audio [samples] or int32 / int64
// codes [codebooks, frames] (codes come back as int64).
at::Tensor copy_in(const DLTensor* tensor, bool codes) {
    const std::string what = codes ? "codes" : "audio";
    const std::string expected = codes ? "int32 [codebooks, frames]" : "float32 [samples]";
    if (!tensor) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " is NULL");
    if (tensor->device.device_type != kDLCPU)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " must be a CPU tensor");
    const int32_t ndim = codes ? 2 : 1;
    const DLDataType dtype = tensor->dtype;
    const bool dtype_ok = dtype.lanes == 1 && (codes ? dtype.code == kDLInt && (dtype.bits == 32 || dtype.bits == 64)
                                                     : dtype.code == kDLFloat && dtype.bits == 32);
    if (tensor->ndim != ndim || !dtype_ok) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " must be " + expected);
    std::vector<int64_t> shape(tensor->shape, tensor->shape + ndim);
    int64_t count = 1;
    for (int64_t size : shape) {
        if (size < 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " has a negative size");
        count *= size;
    }
    if (tensor->strides) {
        int64_t stride = 1;
        for (int32_t d = ndim - 1; d >= 0; --d) {
            if (shape[d] > 1 && tensor->strides[d] != stride)
                throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " must be contiguous");
            stride *= shape[d];
        }
    }
    if (count > 0 && !tensor->data) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what + " has no data");
    const auto scalar = codes ? (dtype.bits == 32 ? at::kInt : at::kLong) : at::kFloat;
    if (count == 0) return at::empty(shape, at::TensorOptions().dtype(codes ? at::kLong : at::kFloat));
    void* data = static_cast<char*>(tensor->data) + tensor->byte_offset;
    at::Tensor copy = at::from_blob(data, shape, at::TensorOptions().dtype(scalar)).clone();
    return codes ? copy.to(at::kLong) : copy;
}

// Hands a CPU tensor across the boundary; the deleter releases it.
struct ExportedTensor {
    DLManagedTensor managed{};
    at::Tensor tensor;
    std::vector<int64_t> shape;
};

DLManagedTensor* export_tensor(const at::Tensor& tensor, bool codes) {
    auto exported = std::make_unique<ExportedTensor>();
    exported->tensor = tensor.to(at::kCPU, codes ? at::kInt : at::kFloat).contiguous();
    exported->shape.assign(exported->tensor.sizes().begin(), exported->tensor.sizes().end());
    DLTensor& dl = exported->managed.dl_tensor;
    dl.data = exported->tensor.data_ptr();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(exported->shape.size());
    dl.dtype = codes ? DLDataType{kDLInt, 32, 1} : DLDataType{kDLFloat, 32, 1};
    dl.shape = exported->shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
    exported->managed.manager_ctx = exported.get();
    exported->managed.deleter = [](DLManagedTensor* self) { delete static_cast<ExportedTensor*>(self->manager_ctx); };
    return &exported.release()->managed;
}

void check_output(const at::Tensor& tensor, int64_t ndim, const char* what) {
    if (!tensor.defined() || tensor.dim() != ndim)
        throw sdk::Error(CDZ_STATUS_INTERNAL, std::string("the codec returned a malformed ") + what);
}

}  // namespace

at::Tensor DecodeOnFlushStream::decode(const at::Tensor& codes, bool is_last) {
    if (collected_.defined() && codes.size(0) != collected_.size(0))
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "stream_decode: a chunk of " + std::to_string(codes.size(0)) +
                                                     " codebooks after chunks of " +
                                                     std::to_string(collected_.size(0)));
    if (codes.size(1) > 0) collected_ = collected_.defined() ? at::cat({collected_, codes}, 1) : codes;
    if (!is_last || !collected_.defined()) return at::empty({0}, at::TensorOptions().dtype(at::kFloat));
    at::Tensor all = collected_;
    collected_ = at::Tensor();
    return codec_.decode(all);
}

std::string Params::string(const char* key) const {
    const char* value = nullptr;
    throw_if_error(host_->params_get_string(params_, key, &value));
    return value ? value : "";
}

int64_t Params::integer(const char* key) const {
    int64_t value = 0;
    throw_if_error(host_->params_get_int(params_, key, &value));
    return value;
}

double Params::number(const char* key) const {
    double value = 0;
    throw_if_error(host_->params_get_float(params_, key, &value));
    return value;
}

c10::Device device_of(const cdz_instance_args& args, const Params& params) {
    std::string name = params.string("device");
    if (name.empty()) name = args.device && *args.device ? args.device : "cpu";
    return torch_device(name);
}

void apply_threads(int64_t threads) {
    if (threads <= 0) return;
    // As backbone.llama does: OpenBLAS's own threads (the LSTM and quantizer
    // matrix products) and LibTorch's OpenMP threads would oversubscribe the
    // cores, so OpenBLAS keeps one. Through dlsym: the BLAS may be another.
    using set_threads_fn = void (*)(int);
    if (auto set_openblas_threads = reinterpret_cast<set_threads_fn>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        set_openblas_threads(1);
    if (at::get_num_threads() != threads) at::set_num_threads(static_cast<int>(threads));
}

void set_host(const cdz_host_api* host_api) { host = host_api; }

cdz_status* enter(const cdz_host_api* host_api, cdz_plugin_list* out, const cdz_plugin_descriptor* const* descriptors,
                  const char* plugin_name) {
    if (host_api->abi_major != CDZ_PLUGIN_ABI_MAJOR || host_api->struct_size < sizeof(cdz_host_api))
        return host_api->status_create(CDZ_STATUS_ABI_MISMATCH,
                                       (std::string(plugin_name) + ": the host's services are too old").c_str());
    set_host(host_api);
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}

cdz_status* create(const char* plugin_name, const cdz_instance_args* args, void** out_ctx, const CodecFactory& factory) {
    return guarded(plugin_name, [&] {
        auto codec = std::make_unique<Codec>();
        codec->name = plugin_name;
        codec->model = factory(*args, Params(host, args->params));
        codec->info = codec->model->info();
        codec->info.struct_size = sizeof(cdz_codec_info);
        *out_ctx = codec.release();
    });
}

void destroy(void* ctx) { delete static_cast<Codec*>(ctx); }

cdz_status* get_info(void* ctx, cdz_codec_info* out) {
    const auto* codec = static_cast<const Codec*>(ctx);
    return guarded(codec->name, [&] {
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "get_info: out is NULL");
        const uint32_t size = out->struct_size ? out->struct_size : sizeof(cdz_codec_info);
        std::memcpy(out, &codec->info, std::min<size_t>(size, sizeof(cdz_codec_info)));
        out->struct_size = size;
    });
}

cdz_status* encode(void* ctx, const DLTensor* audio, DLManagedTensor** out_codes) {
    const auto* codec = static_cast<const Codec*>(ctx);
    return guarded(codec->name, [&] {
        if (!out_codes) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "encode: out_codes is NULL");
        const at::Tensor samples = copy_in(audio, false);
        if (samples.size(0) == 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "encode: the audio has no samples");
        const at::Tensor codes = codec->model->encode(samples);
        check_output(codes, 2, "codes");
        *out_codes = export_tensor(codes, true);
    });
}

cdz_status* decode(void* ctx, const DLTensor* codes, DLManagedTensor** out_audio) {
    const auto* codec = static_cast<const Codec*>(ctx);
    return guarded(codec->name, [&] {
        if (!out_audio) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "decode: out_audio is NULL");
        const at::Tensor input = copy_in(codes, true);
        if (input.size(1) == 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "decode: the codes have no frames");
        const at::Tensor audio = codec->model->decode(input);
        check_output(audio, 1, "audio");
        *out_audio = export_tensor(audio, false);
    });
}

cdz_status* stream_create(void* ctx, void** out_stream) {
    const auto* codec = static_cast<const Codec*>(ctx);
    return guarded(codec->name, [&] {
        if (!out_stream) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "stream_create: out_stream is NULL");
        *out_stream = new Stream{codec, codec->model->decode_stream()};
    });
}

cdz_status* stream_decode(void* raw, const DLTensor* codes, int is_last, DLManagedTensor** out_audio) {
    auto* stream = static_cast<Stream*>(raw);
    return guarded(stream->codec->name, [&] {
        if (!out_audio) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "stream_decode: out_audio is NULL");
        const at::Tensor audio = stream->decoder->decode(copy_in(codes, true), is_last != 0);
        check_output(audio, 1, "audio");
        *out_audio = export_tensor(audio, false);
    });
}

void stream_destroy(void* stream) { delete static_cast<Stream*>(stream); }

}  // namespace cadenza::codec_plugin
