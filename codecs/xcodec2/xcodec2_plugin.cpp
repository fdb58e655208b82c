// codec.xcodec2: X-codec2 (zhenye234/X-Codec-2.0, HKUSTAudio/xcodec2)
// decoding: one codebook of 65,536 FSQ codes at 50 Hz -> mono 16 kHz audio.
// Encoding is not implemented (CDZ_STATUS_UNSUPPORTED, can_encode 0). See
// docs/codecs.md.
#include <filesystem>
#include <memory>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "codec_plugin_glue.h"
#include "libtorch_boundary.h"
#include "xcodec2_mono_codec.h"

namespace {

using namespace cadenza;
using namespace cadenza::xcodec2;

constexpr const char* plugin_name = "codec.xcodec2";

const cdz_param_spec params[] = {
    {"checkpoint", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "state dict with generator.* and fc_post_a.* keys: .ckpt / .pt / .bin (torch.save zip archive of the flat "
     "state dict) or .safetensors (e.g. HKUSTAudio/xcodec2 model.safetensors)"},
    {"device", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr, "\"cpu\", \"cuda:N\"; empty: the pipeline's device"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "LibTorch intra-op threads (process-wide); 0: leave as is"},
};

std::unique_ptr<codec_plugin::MonoCodec> make_codec(const cdz_instance_args& args, const sdk::Params& p) {
    const std::filesystem::path checkpoint = p.string("checkpoint");
    codec_plugin::apply_threads(p.integer("threads"));
    const c10::Device device = codec_plugin::device_of(args, p);
    auto decoder = std::make_unique<XCodec2Decoder>(XCodec2Decoder::load(XCodec2Config::official(), checkpoint, device));
    return std::make_unique<XCodec2MonoCodec>(std::move(decoder));
}

const cdz_codec_vtable vtable = codec_plugin::vtable_of<make_codec>();

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "0.1.0", "X-codec2 decoder: 65,536 FSQ codes at 50 Hz -> 16 kHz speech (no encoder yet)",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, torch_support::describe_exception);
}
