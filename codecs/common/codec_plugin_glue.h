// What the codec plugins share at the C ABI: a codec written against
// LibTorch tensors (MonoCodec) becomes a cdz_codec_vtable (through the SDK's
// class-to-table templates), with inputs checked, outputs handed over as
// DLPack tensors, and inference mode on.
#pragma once

#include <memory>
#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"

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

// The device to run on: the `device` parameter when set, else the
// pipeline's; an unknown name or CUDA without CUDA support is an error.
c10::Device device_of(const cdz_instance_args& args, const sdk::Params& params);
// threads > 0: LibTorch's intra-op thread count (process-wide), OpenBLAS
// held to one thread; 0 leaves both alone.
void apply_threads(int64_t threads);

using CodecFactory = std::unique_ptr<MonoCodec> (*)(const cdz_instance_args& args, const sdk::Params& params);

class CodecStream {
public:
    explicit CodecStream(std::unique_ptr<MonoDecodeStream> decoder) : decoder_(std::move(decoder)) {}
    DLManagedTensor* decode(const DLTensor* codes, int is_last);

private:
    std::unique_ptr<MonoDecodeStream> decoder_;
};

// A codec instance at the C ABI: inputs checked, outputs handed over as
// DLPack tensors, LibTorch in inference mode.
class CodecInstance {
public:
    CodecInstance(const cdz_instance_args& args, CodecFactory factory);
    void get_info(cdz_codec_info* out) const;
    DLManagedTensor* encode(const DLTensor* audio) const;
    DLManagedTensor* decode(const DLTensor* codes) const;
    std::unique_ptr<CodecStream> open_stream() const;

private:
    std::unique_ptr<MonoCodec> model_;
    cdz_codec_info info_{};
};

template <CodecFactory factory>
class FactoryCodecInstance : public CodecInstance {
public:
    explicit FactoryCodecInstance(const cdz_instance_args& args) : CodecInstance(args, factory) {}
};

// The codec table of a glue plugin whose codec `factory` makes.
template <CodecFactory factory>
constexpr cdz_codec_vtable vtable_of() {
    using Instance = FactoryCodecInstance<factory>;
    return cdz_codec_vtable{sizeof(cdz_codec_vtable),
                            sdk::create<Instance>,
                            sdk::destroy<Instance>,
                            sdk::method<&CodecInstance::get_info>,
                            sdk::method<&CodecInstance::encode>,
                            sdk::method<&CodecInstance::decode>,
                            sdk::method<&CodecInstance::open_stream>,
                            sdk::method<&CodecStream::decode>,
                            sdk::destroy<CodecStream>};
}

}  // namespace cadenza::codec_plugin
