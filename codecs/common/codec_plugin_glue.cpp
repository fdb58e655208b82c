#include "codec_plugin_glue.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_tensor.hpp"
#include "libtorch_boundary.h"
#include "torch_device.h"

namespace cadenza::codec_plugin {

namespace {

const sdk::TensorSpec audio_spec{1, {sdk::float32}, "float32 [samples]"};
const sdk::TensorSpec codes_spec{2, {sdk::int32, sdk::int64}, "int32 [codebooks, frames]"};

// A copy of a caller's CPU tensor: float32 audio [samples] or int32 / int64
// codes [codebooks, frames] (codes come back as int64).
at::Tensor copy_in(const DLTensor* tensor, bool codes) {
    const sdk::TensorView view(tensor, codes ? "codes" : "audio", codes ? codes_spec : audio_spec);
    const at::ScalarType stored = codes ? at::kLong : at::kFloat;
    if (view.element_count() == 0) return at::empty(view.shape(), at::TensorOptions().dtype(stored));
    const auto scalar = codes ? (view.dtype().bits == 32 ? at::kInt : at::kLong) : at::kFloat;
    at::Tensor copy = at::from_blob(const_cast<void*>(view.data()), view.shape(), at::TensorOptions().dtype(scalar)).clone();
    return codes ? copy.to(at::kLong) : copy;
}

DLManagedTensor* export_output(const at::Tensor& tensor, int64_t ndim, const char* what) {
    if (!tensor.defined() || tensor.dim() != ndim)
        throw sdk::Error(CDZ_STATUS_INTERNAL, std::string("the codec returned a malformed ") + what);
    return torch_support::export_cpu_tensor(tensor, ndim == 2 ? at::kInt : at::kFloat);
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

c10::Device device_of(const cdz_instance_args& args, const sdk::Params& params) {
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

CodecInstance::CodecInstance(const cdz_instance_args& args, CodecFactory factory) {
    c10::InferenceMode inference;
    model_ = factory(args, sdk::Params(args));
    info_ = model_->info();
    info_.struct_size = sizeof(cdz_codec_info);
}

void CodecInstance::get_info(cdz_codec_info* out) const {
    if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "get_info: out is NULL");
    const uint32_t size = out->struct_size ? out->struct_size : sizeof(cdz_codec_info);
    std::memcpy(out, &info_, std::min<size_t>(size, sizeof(cdz_codec_info)));
    out->struct_size = size;
}

DLManagedTensor* CodecInstance::encode(const DLTensor* audio) const {
    c10::InferenceMode inference;
    const at::Tensor samples = copy_in(audio, false);
    if (samples.size(0) == 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "encode: the audio has no samples");
    return export_output(model_->encode(samples), 2, "codes");
}

DLManagedTensor* CodecInstance::decode(const DLTensor* codes) const {
    c10::InferenceMode inference;
    const at::Tensor input = copy_in(codes, true);
    if (input.size(1) == 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "decode: the codes have no frames");
    return export_output(model_->decode(input), 1, "audio");
}

std::unique_ptr<CodecStream> CodecInstance::open_stream() const {
    c10::InferenceMode inference;
    return std::make_unique<CodecStream>(model_->decode_stream());
}

DLManagedTensor* CodecStream::decode(const DLTensor* codes, int is_last) {
    c10::InferenceMode inference;
    return export_output(decoder_->decode(copy_in(codes, true), is_last != 0), 1, "audio");
}

}  // namespace cadenza::codec_plugin
