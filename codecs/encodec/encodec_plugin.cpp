// codec.encodec: EnCodec (facebookresearch/encodec) from an official or
// compatible checkpoint. See docs/codecs.md.
#include <filesystem>
#include <memory>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "codec_plugin_glue.h"
#include "encodec_mono_codec.h"
#include "libtorch_boundary.h"

namespace {

using namespace cadenza;
using namespace cadenza::encodec;

constexpr const char* plugin_name = "codec.encodec";

const cdz_param_spec params[] = {
    {"checkpoint", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "state dict: the official encodec_24khz-d7cc33bc.th / encodec_48khz-7e698e3e.th, or a compatible .th / .safetensors"},
    {"config", CDZ_PARAM_STRING, "\"encodec_24khz\"", 0, 0, 0, nullptr,
     "encodec_24khz, encodec_48khz, or a JSON config file (relative to the checkpoint's directory)"},
    {"bandwidth", CDZ_PARAM_FLOAT, "6.0", 1, 0.001, 1000.0, nullptr,
     "kbps, one of the config's target_bandwidths; sets the number of codebooks"},
    {"decode_scale", CDZ_PARAM_FLOAT, "0.1", 1, 1e-6, 1000.0, nullptr,
     "normalizing models (48 kHz): the level decoded segments are scaled to, in place of the per-segment scales"},
    {"device", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr, "\"cpu\", \"cuda:N\"; empty: the pipeline's device"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "LibTorch intra-op threads (process-wide); 0: leave as is"},
};

std::unique_ptr<codec_plugin::MonoCodec> make_codec(const cdz_instance_args& args, const sdk::Params& p) {
    const std::filesystem::path checkpoint = p.string("checkpoint");
    const EncodecConfig config = EncodecConfig::resolve(p.string("config"), checkpoint.parent_path());
    const double bandwidth = p.number("bandwidth");
    config.codebooks_for_bandwidth(bandwidth);  // a bandwidth the model lacks fails before the weights are read
    codec_plugin::apply_threads(p.integer("threads"));
    const c10::Device device = codec_plugin::device_of(args, p);
    auto model = std::make_shared<const EncodecModel>(EncodecModel::load(config, checkpoint, device));
    return std::make_unique<EncodecMonoCodec>(std::move(model), bandwidth, p.number("decode_scale"));
}

const cdz_codec_vtable vtable = codec_plugin::vtable_of<make_codec>();

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "1.0.0", "EnCodec 24 kHz / 48 kHz neural audio codec (SEANet + residual VQ)",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, torch_support::describe_exception);
}
