// codec.mel_fsq: the project's own codec. 16 kHz audio <-> one FSQ codebook
// at 50 frames per second through a log-mel autoencoder, with Griffin-Lim as
// the vocoder (codecs/mel_fsq, docs/codecs.md).
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "error.h"
#include "mel_fsq_codec.h"
#include "mel_stream_decoder.h"
#include "thread_policy.h"

namespace {

using cadenza::Error;
using namespace cadenza::mel_fsq;

const cdz_host_api* host = nullptr;
constexpr const char* plugin_name = "codec.mel_fsq";

const cdz_param_spec params[] = {
    {"model", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr, "codec weights (.safetensors from `cadenza train codec`)"},
    {"griffin_lim_iterations", CDZ_PARAM_INT, "32", 1, 1, 1000, nullptr, "Griffin-Lim iterations"},
    {"griffin_lim_momentum", CDZ_PARAM_FLOAT, "0.99", 1, 0, 0.999, nullptr, "fast Griffin-Lim momentum; 0: classic"},
    {"griffin_lim_power", CDZ_PARAM_FLOAT, "1.0", 1, 0.5, 3.0, nullptr, "magnitudes are raised to this power first"},
    {"stream_chunk_frames", CDZ_PARAM_INT, "10", 1, 1, 10000, nullptr, "frames of audio a streamed chunk waits for"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "intra-op threads; 0: one per core"},
};

struct Codec {
    std::unique_ptr<MelFsqCodec> codec;
    StreamOptions stream;
    at::Device device = at::kCPU;
};

template <typename Body>
cdz_status* guarded(Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (const std::bad_alloc&) {
        return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "codec.mel_fsq: out of memory");
    } catch (const Error& e) {
        return host->status_create(e.code(), (std::string(plugin_name) + ": " + e.what()).c_str());
    } catch (const std::exception& e) {
        return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, (std::string(plugin_name) + ": " + e.what()).c_str());
    } catch (...) {
        return host->status_create(CDZ_STATUS_INTERNAL, "codec.mel_fsq: unknown exception");
    }
}

void throw_if_error(cdz_status* status) {
    if (!status) return;
    const cdz_status_code code = host->status_code(status);
    const std::string message = host->status_message(status);
    host->status_release(status);
    throw Error(code, message);
}

int64_t get_int(const cdz_params* params, const char* key) {
    int64_t value = 0;
    throw_if_error(host->params_get_int(params, key, &value));
    return value;
}

double get_float(const cdz_params* params, const char* key) {
    double value = 0;
    throw_if_error(host->params_get_float(params, key, &value));
    return value;
}

std::string get_string(const cdz_params* params, const char* key) {
    const char* value = nullptr;
    throw_if_error(host->params_get_string(params, key, &value));
    return value;
}

DLManagedTensor* new_tensor(DLDataType dtype, const std::vector<int64_t>& shape) {
    DLManagedTensor* tensor = host->tensor_create_cpu(dtype, shape.data(), static_cast<int32_t>(shape.size()));
    if (!tensor) throw std::bad_alloc();
    return tensor;
}

DLManagedTensor* audio_tensor(const float* samples, int64_t count) {
    DLManagedTensor* tensor = new_tensor(DLDataType{kDLFloat, 32, 1}, {count});
    if (count > 0) std::memcpy(tensor->dl_tensor.data, samples, static_cast<size_t>(count) * sizeof(float));
    return tensor;
}

at::Tensor codes_from(const DLTensor* codes) {
    if (!codes || codes->ndim != 2 || codes->shape[0] != 1 || codes->dtype.code != kDLInt || codes->dtype.bits != 32 ||
        codes->device.device_type != kDLCPU)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes must be int32 [1, frames] on the CPU");
    if (codes->strides && codes->shape[1] > 1 && codes->strides[1] != 1)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "codes must be contiguous");
    const auto* data = reinterpret_cast<const int32_t*>(static_cast<const char*>(codes->data) + codes->byte_offset);
    return at::from_blob(const_cast<int32_t*>(data), {codes->shape[1]}, at::kInt).to(at::kLong);
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return guarded([&] {
        auto codec = std::make_unique<Codec>();
        cadenza::llama::apply_thread_policy(static_cast<int>(get_int(args->params, "threads")));
        codec->device = at::Device(args->device ? std::string(args->device) : std::string("cpu"));
        codec->stream.griffin_lim.iterations = get_int(args->params, "griffin_lim_iterations");
        codec->stream.griffin_lim.momentum = get_float(args->params, "griffin_lim_momentum");
        codec->stream.griffin_lim.power = get_float(args->params, "griffin_lim_power");
        codec->stream.chunk_frames = get_int(args->params, "stream_chunk_frames");
        c10::InferenceMode inference;
        try {
            codec->codec = std::make_unique<MelFsqCodec>(MelFsqCodec::load(get_string(args->params, "model"), codec->device));
        } catch (const std::runtime_error& error) {
            throw Error(CDZ_STATUS_INVALID_CONFIG, error.what());
        }
        *out_ctx = codec.release();
    });
}

void destroy(void* ctx) { delete static_cast<Codec*>(ctx); }

cdz_status* get_info(void* ctx, cdz_codec_info* out) {
    return guarded([&] {
        const MelCodecConfig& config = static_cast<const Codec*>(ctx)->codec->config();
        out->sample_rate = static_cast<uint32_t>(config.sample_rate);
        out->frame_rate = config.frame_rate();
        out->codebook_count = 1;
        out->codebook_size = static_cast<uint32_t>(config.codebook_size());
        out->can_encode = 1;
        out->can_decode = 1;
        out->can_stream = 1;
    });
}

cdz_status* encode(void* ctx, const DLTensor* audio, DLManagedTensor** out_codes) {
    return guarded([&] {
        const auto* codec = static_cast<const Codec*>(ctx);
        if (!audio || audio->ndim != 1 || audio->dtype.code != kDLFloat || audio->dtype.bits != 32 ||
            audio->device.device_type != kDLCPU)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "audio must be float32 [samples] on the CPU");
        if (audio->shape[0] < codec->codec->config().n_fft / 2 + 1)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "audio too short to encode: " + std::to_string(audio->shape[0]) +
                                                         " samples");
        c10::InferenceMode inference;
        const auto* data = reinterpret_cast<const float*>(static_cast<const char*>(audio->data) + audio->byte_offset);
        const at::Tensor samples = at::from_blob(const_cast<float*>(data), {audio->shape[0]}, at::kFloat);
        const at::Tensor codes = codec->codec->encode(samples).to(at::kCPU, at::kInt).contiguous();
        DLManagedTensor* out = new_tensor(DLDataType{kDLInt, 32, 1}, {1, codes.numel()});
        std::memcpy(out->dl_tensor.data, codes.data_ptr<int32_t>(), static_cast<size_t>(codes.numel()) * sizeof(int32_t));
        *out_codes = out;
    });
}

cdz_status* decode(void* ctx, const DLTensor* codes, DLManagedTensor** out_audio) {
    return guarded([&] {
        const auto* codec = static_cast<const Codec*>(ctx);
        c10::InferenceMode inference;
        const at::Tensor audio =
            codec->codec->decode(codes_from(codes), codec->stream.griffin_lim).to(at::kCPU, at::kFloat).contiguous();
        *out_audio = audio_tensor(audio.data_ptr<float>(), audio.numel());
    });
}

cdz_status* stream_create(void* ctx, void** out_stream) {
    return guarded([&] {
        const auto* codec = static_cast<const Codec*>(ctx);
        *out_stream = new MelStreamDecoder(*codec->codec, codec->stream);
    });
}

cdz_status* stream_decode(void* stream, const DLTensor* codes, int is_last, DLManagedTensor** out_audio) {
    return guarded([&] {
        c10::InferenceMode inference;
        const std::vector<float> audio = static_cast<MelStreamDecoder*>(stream)->push(codes_from(codes), is_last != 0);
        *out_audio = audio_tensor(audio.data(), static_cast<int64_t>(audio.size()));
    });
}

void stream_destroy(void* stream) { delete static_cast<MelStreamDecoder*>(stream); }

const cdz_codec_vtable vtable = {
    sizeof(cdz_codec_vtable), create, destroy, get_info, encode, decode, stream_create, stream_decode, stream_destroy,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "1.0.0",
    "log-mel autoencoder with one FSQ codebook (16 kHz, 50 frames/s) and a Griffin-Lim vocoder",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    if (host_api->abi_major != CDZ_PLUGIN_ABI_MAJOR || host_api->struct_size < sizeof(cdz_host_api))
        return host_api->status_create(CDZ_STATUS_ABI_MISMATCH, "codec.mel_fsq: the host's services are too old");
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}
