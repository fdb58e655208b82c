// codec.speechtokenizer: SpeechTokenizer from its released SpeechTokenizer.pt
// and config.json. Mono 16 kHz audio <-> n_q codebooks at 50 Hz (with the
// base config); n_q = 1 gives the semantic RVQ-1 tokens only. The decoder
// is not causal, so streaming decodes everything when the last chunk
// arrives. See docs/codecs.md.
#include <filesystem>
#include <memory>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "codec_plugin_glue.h"
#include "libtorch_boundary.h"
#include "speechtokenizer_mono_codec.h"

namespace {

using namespace cadenza;
using namespace cadenza::speechtokenizer;

constexpr const char* plugin_name = "codec.speechtokenizer";

const cdz_param_spec params[] = {
    {"checkpoint", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr, "state dict: SpeechTokenizer.pt (or .safetensors)"},
    {"config", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr,
     "the model's config.json (relative to the checkpoint's directory); empty: config.json beside the checkpoint"},
    {"n_q", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "codebooks to encode and decode, 1 = semantic tokens only; 0: all of the config's n_q"},
    {"device", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr, "\"cpu\", \"cuda:N\"; empty: the pipeline's device"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "LibTorch intra-op threads (process-wide); 0: leave as is"},
};

std::unique_ptr<codec_plugin::MonoCodec> make_codec(const cdz_instance_args& args, const sdk::Params& p) {
    const std::filesystem::path checkpoint = p.string("checkpoint");
    std::filesystem::path config_path = p.string("config");
    if (config_path.empty()) config_path = "config.json";
    if (config_path.is_relative()) config_path = checkpoint.parent_path() / config_path;
    if (!std::filesystem::is_regular_file(config_path))
        throw sdk::Error(CDZ_STATUS_NOT_FOUND, "config file not found: " + config_path.string());
    const SpeechTokenizerConfig config = SpeechTokenizerConfig::from_file(config_path);
    const int64_t requested = p.integer("n_q");
    if (requested > config.quantizer.n_q)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "n_q = " + std::to_string(requested) + " but the model has " +
                                                   std::to_string(config.quantizer.n_q) + " quantizers (" +
                                                   config_path.string() + ")");
    codec_plugin::apply_threads(p.integer("threads"));
    const c10::Device device = codec_plugin::device_of(args, p);
    auto model = std::make_unique<SpeechTokenizerModel>(SpeechTokenizerModel::load(config, checkpoint, device));
    return std::make_unique<SpeechTokenizerMonoCodec>(std::move(model), requested > 0 ? requested : config.quantizer.n_q);
}

const cdz_codec_vtable vtable = codec_plugin::vtable_of<make_codec>();

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "1.0.0", "SpeechTokenizer: semantic (RVQ-1) and acoustic speech tokens, 16 kHz",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, torch_support::describe_exception);
}
