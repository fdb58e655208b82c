// test.tone_codec: a test double of a codec. Code c is one frame of a sine at
// base_hz + c * step_hz; encoding picks, per frame, the code whose tone
// correlates best with the audio. Phase runs on across frames, so chunked
// (streaming) decoding gives exactly the samples of whole decoding.
#include <cmath>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace {

const cdz_host_api* host = nullptr;

const cdz_param_spec params[] = {
    {"sample_rate", CDZ_PARAM_INT, "16000", 1, 1000, 192000, nullptr, "Hz"},
    {"frame_rate", CDZ_PARAM_FLOAT, "50.0", 1, 1, 1000, nullptr, "frames per second; must divide sample_rate"},
    {"codebook_size", CDZ_PARAM_INT, "32", 1, 2, 4096, nullptr, "number of tones"},
    {"base_hz", CDZ_PARAM_FLOAT, "200.0", 1, 1, 20000, nullptr, "tone of code 0"},
    {"step_hz", CDZ_PARAM_FLOAT, "25.0", 1, 1, 20000, nullptr, "tone spacing"},
};

struct Codec {
    int64_t sample_rate, codebook_size, samples_per_frame;
    double frame_rate, base_hz, step_hz;
};

struct Stream {
    const Codec* codec;
    double phase = 0.0;
};

constexpr double two_pi = 6.283185307179586;

cdz_status* fail(cdz_status_code code, const std::string& message) {
    return host->status_create(code, ("test.tone_codec: " + message).c_str());
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    Codec c{};
    cdz_status* status = nullptr;
    if ((status = host->params_get_int(args->params, "sample_rate", &c.sample_rate)) ||
        (status = host->params_get_float(args->params, "frame_rate", &c.frame_rate)) ||
        (status = host->params_get_int(args->params, "codebook_size", &c.codebook_size)) ||
        (status = host->params_get_float(args->params, "base_hz", &c.base_hz)) ||
        (status = host->params_get_float(args->params, "step_hz", &c.step_hz)))
        return status;
    const double per_frame = c.sample_rate / c.frame_rate;
    if (std::fabs(per_frame - std::round(per_frame)) > 1e-9)
        return fail(CDZ_STATUS_INVALID_CONFIG, "frame_rate must divide sample_rate");
    c.samples_per_frame = static_cast<int64_t>(std::round(per_frame));
    auto* codec = new (std::nothrow) Codec(c);
    if (!codec) return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    *out_ctx = codec;
    return nullptr;
}

void destroy(void* ctx) { delete static_cast<Codec*>(ctx); }

cdz_status* get_info(void* ctx, cdz_codec_info* out) {
    const auto* c = static_cast<const Codec*>(ctx);
    out->sample_rate = static_cast<uint32_t>(c->sample_rate);
    out->frame_rate = c->frame_rate;
    out->codebook_count = 1;
    out->codebook_size = static_cast<uint32_t>(c->codebook_size);
    out->can_encode = 1;
    out->can_decode = 1;
    out->can_stream = 1;
    return nullptr;
}

double tone_hz(const Codec& c, int32_t code) { return c.base_hz + c.step_hz * code; }

cdz_status* decode_frames(const Codec& c, const DLTensor* codes, double& phase, DLManagedTensor** out_audio) {
    if (codes->ndim != 2 || codes->shape[0] != 1 || codes->dtype.code != kDLInt || codes->dtype.bits != 32)
        return fail(CDZ_STATUS_INVALID_ARGUMENT, "codes must be int32 [1, frames]");
    const int64_t frames = codes->shape[1];
    const int64_t shape[1] = {frames * c.samples_per_frame};
    DLManagedTensor* audio = host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, shape, 1);
    if (!audio) return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    const auto* code = static_cast<const int32_t*>(codes->data);
    float* samples = static_cast<float*>(audio->dl_tensor.data);
    for (int64_t f = 0; f < frames; ++f) {
        if (code[f] < 0 || code[f] >= c.codebook_size) {
            audio->deleter(audio);
            return fail(CDZ_STATUS_INVALID_ARGUMENT, "code " + std::to_string(code[f]) + " out of range");
        }
        const double step = two_pi * tone_hz(c, code[f]) / c.sample_rate;
        for (int64_t i = 0; i < c.samples_per_frame; ++i) {
            *samples++ = static_cast<float>(0.5 * std::sin(phase));
            phase = std::fmod(phase + step, two_pi);
        }
    }
    *out_audio = audio;
    return nullptr;
}

cdz_status* decode(void* ctx, const DLTensor* codes, DLManagedTensor** out_audio) {
    double phase = 0.0;
    return decode_frames(*static_cast<const Codec*>(ctx), codes, phase, out_audio);
}

cdz_status* encode(void* ctx, const DLTensor* audio, DLManagedTensor** out_codes) {
    const auto& c = *static_cast<const Codec*>(ctx);
    if (audio->ndim != 1 || audio->dtype.code != kDLFloat || audio->dtype.bits != 32)
        return fail(CDZ_STATUS_INVALID_ARGUMENT, "audio must be float32 [samples]");
    const int64_t frames = audio->shape[0] / c.samples_per_frame;
    const int64_t shape[2] = {1, frames};
    DLManagedTensor* codes = host->tensor_create_cpu(DLDataType{kDLInt, 32, 1}, shape, 2);
    if (!codes) return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    const auto* samples = static_cast<const float*>(audio->data);
    auto* out = static_cast<int32_t*>(codes->dl_tensor.data);
    for (int64_t f = 0; f < frames; ++f) {
        double best_energy = -1.0;
        for (int32_t code = 0; code < c.codebook_size; ++code) {
            double re = 0, im = 0;
            const double w = two_pi * tone_hz(c, code) / c.sample_rate;
            for (int64_t i = 0; i < c.samples_per_frame; ++i) {
                re += samples[f * c.samples_per_frame + i] * std::cos(w * i);
                im += samples[f * c.samples_per_frame + i] * std::sin(w * i);
            }
            if (re * re + im * im > best_energy) {
                best_energy = re * re + im * im;
                out[f] = code;
            }
        }
    }
    *out_codes = codes;
    return nullptr;
}

cdz_status* stream_create(void* ctx, void** out_stream) {
    *out_stream = new (std::nothrow) Stream{static_cast<const Codec*>(ctx)};
    if (!*out_stream) return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    return nullptr;
}

cdz_status* stream_decode(void* raw, const DLTensor* codes, int is_last, DLManagedTensor** out_audio) {
    (void)is_last;
    auto* stream = static_cast<Stream*>(raw);
    return decode_frames(*stream->codec, codes, stream->phase, out_audio);
}

void stream_destroy(void* stream) { delete static_cast<Stream*>(stream); }

const cdz_codec_vtable vtable = {
    sizeof(cdz_codec_vtable), create, destroy, get_info, encode, decode, stream_create, stream_decode, stream_destroy,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "test.tone_codec",
    CDZ_PLUGIN_KIND_CODEC, "1.0.0", "test double: one sine tone per code",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}
