#include "codec_calls.h"

#include <cmath>

#include "error.h"
#include "status_object.h"

namespace cadenza {
namespace {

constexpr DLDataType int32_type{kDLInt, 32, 1};

// A codec's output: its model is at fault, a configuration error.
void check_decoded_audio(const ManagedTensor& audio, int64_t count, const std::string& stage) {
    check_finite_audio(audio.data<float>(), static_cast<size_t>(count), CDZ_STATUS_INVALID_CONFIG,
                       stage + ": decoded audio");
}

}  // namespace

void check_finite_audio(const float* samples, size_t count, cdz_status_code status, const std::string& what) {
    for (size_t i = 0; i < count; ++i)
        if (!std::isfinite(samples[i]))
            throw Error(status, what + " has a non-finite sample (at " + std::to_string(i) + " of " +
                                    std::to_string(count) + ")");
}

std::vector<float> decode_whole(const PluginInstance& codec, const int32_t* codes, int64_t codebooks, int64_t frames) {
    TensorView view(codes, int32_type, {codebooks, frames});
    ManagedTensor decoded;
    throw_if_error(codec.vtable<cdz_codec_vtable>().decode(codec.context(), view.get(), decoded.out()),
                   codec.name() + ": decode");
    const auto shape = decoded.expect(kDLFloat, 32, 1, codec.name() + ": audio");
    check_decoded_audio(decoded, shape[0], codec.name() + ": decode");
    return std::vector<float>(decoded.data<float>(), decoded.data<float>() + shape[0]);
}

ManagedTensor decode_stream_piece(const PluginInstance& codec, void* stream, const int32_t* codes, int64_t frames,
                                  bool last) {
    TensorView view(codes, int32_type, {1, frames});
    ManagedTensor audio;
    throw_if_error(codec.vtable<cdz_codec_vtable>().stream_decode(stream, view.get(), last ? 1 : 0, audio.out()),
                   codec.name() + ": stream_decode");
    const auto shape = audio.expect(kDLFloat, 32, 1, codec.name() + ": audio");
    check_decoded_audio(audio, shape[0], codec.name() + ": stream_decode");
    return audio;
}

}  // namespace cadenza
