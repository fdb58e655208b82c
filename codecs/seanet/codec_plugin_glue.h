// What the codec plugins share at the C ABI: a codec written against
// LibTorch tensors (MonoCodec) becomes a cdz_codec_vtable's functions, with
// every exception caught and returned as a cdz_status, inputs checked,
// outputs handed over as DLPack tensors, and inference mode on.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "cadenza/plugin.h"

namespace cadenza::codec_plugin {

class MonoDecodeStream {
public:
    virtual ~MonoDecodeStream() = default;
    // codes int64 [codebooks, frames] (frames may be 0) -> float32 [samples] on the CPU.
    virtual at::Tensor decode(const at::Tensor& codes, bool is_last) = 0;
};

// The ABI's view of a codec: mono float32 audio and int64 codes, CPU tensors.
class MonoCodec {
public:
    virtual ~MonoCodec() = default;
    virtual cdz_codec_info info() const = 0;
    // float32 [samples] -> int64 [codebooks, frames]
    virtual at::Tensor encode(const at::Tensor& samples) const = 0;
    // int64 [codebooks, frames] -> float32 [samples]
    virtual at::Tensor decode(const at::Tensor& codes) const = 0;
    virtual std::unique_ptr<MonoDecodeStream> decode_stream() const = 0;
};

// For a decoder that needs the whole input: collects the codes and decodes
// them all when the last chunk arrives.
class DecodeOnFlushStream : public MonoDecodeStream {
public:
    explicit DecodeOnFlushStream(const MonoCodec& codec) : codec_(codec) {}
    at::Tensor decode(const at::Tensor& codes, bool is_last) override;

private:
    const MonoCodec& codec_;
    at::Tensor collected_;
};

// The validated parameters; a host error becomes a cadenza::sdk::Error.
class Params {
public:
    Params(const cdz_host_api* host, const cdz_params* params) : host_(host), params_(params) {}
    std::string string(const char* key) const;
    int64_t integer(const char* key) const;
    double number(const char* key) const;

private:
    const cdz_host_api* host_;
    const cdz_params* params_;
};

// The device to run on: the `device` parameter when set, else the
// pipeline's; an unknown name or CUDA without CUDA support is an error.
c10::Device device_of(const cdz_instance_args& args, const Params& params);
// threads > 0: LibTorch's intra-op thread count (process-wide), OpenBLAS
// held to one thread; 0 leaves both alone.
void apply_threads(int64_t threads);

using CodecFactory = std::function<std::unique_ptr<MonoCodec>(const cdz_instance_args& args, const Params& params)>;

// Keeps the host table; call from cdz_plugin_entry.
void set_host(const cdz_host_api* host);

// The body of a glue plugin's cdz_plugin_entry: refuses an older host, keeps
// its table and hands out the one descriptor.
cdz_status* enter(const cdz_host_api* host, cdz_plugin_list* out, const cdz_plugin_descriptor* const* descriptors,
                  const char* plugin_name);

// The vtable's functions. `plugin_name` prefixes every message.
cdz_status* create(const char* plugin_name, const cdz_instance_args* args, void** out_ctx, const CodecFactory& factory);
void destroy(void* ctx);
cdz_status* get_info(void* ctx, cdz_codec_info* out);
cdz_status* encode(void* ctx, const DLTensor* audio, DLManagedTensor** out_codes);
cdz_status* decode(void* ctx, const DLTensor* codes, DLManagedTensor** out_audio);
cdz_status* stream_create(void* ctx, void** out_stream);
cdz_status* stream_decode(void* stream, const DLTensor* codes, int is_last, DLManagedTensor** out_audio);
void stream_destroy(void* stream);

// The codec table of a glue plugin: its own create, the glue for the rest.
constexpr cdz_codec_vtable vtable_with(cdz_status* (*plugin_create)(const cdz_instance_args*, void**)) {
    return cdz_codec_vtable{sizeof(cdz_codec_vtable), plugin_create, destroy,       get_info,      encode,
                            decode,                   stream_create, stream_decode, stream_destroy};
}

}  // namespace cadenza::codec_plugin
