// codec.hubert: HuBERT features (torchaudio Wav2Vec2Model / Hugging Face
// HubertModel weights) clustered by k-means into discrete units. Mono
// 16 kHz audio -> one codebook of K units at 50 Hz (hubert_base). Encode
// only: decode and streaming return CDZ_STATUS_UNSUPPORTED. See docs/codecs.md.
#include <filesystem>
#include <memory>
#include <string>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "codec_plugin_glue.h"
#include "hubert_mono_codec.h"
#include "libtorch_boundary.h"

namespace {

using namespace cadenza;
using namespace cadenza::hubert;

constexpr const char* plugin_name = "codec.hubert";

const cdz_param_spec params[] = {
    {"checkpoint", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "HuBERT weights: .safetensors, pytorch_model.bin or .pt (torch.save zip), torchaudio or Hugging Face key names"},
    {"config", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr,
     "hubert_base, hubert_large, hubert_xlarge, or a Hugging Face config.json (relative to the checkpoint's "
     "directory); empty: config.json beside the checkpoint"},
    {"kmeans", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "k-means centroids: safetensors with 'centroids' [K, hidden_size] and optional metadata 'layer' (1-based)"},
    {"layer", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "1-based transformer layer whose output is clustered (Hugging Face hidden_states[layer]); 0: the k-means file's"},
    {"device", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr, "\"cpu\", \"cuda:N\"; empty: the pipeline's device"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "LibTorch intra-op threads (process-wide); 0: leave as is"},
};

std::unique_ptr<codec_plugin::MonoCodec> make_codec(const cdz_instance_args& args, const sdk::Params& p) {
    const std::filesystem::path checkpoint = p.string("checkpoint");
    const std::string config_name = p.string("config");
    HubertConfig config;
    if (HubertConfig::is_official(config_name)) {
        config = HubertConfig::official(config_name);
    } else {
        std::filesystem::path config_path = config_name.empty() ? std::filesystem::path("config.json") : std::filesystem::path(config_name);
        if (config_path.is_relative()) config_path = checkpoint.parent_path() / config_path;
        if (!std::filesystem::is_regular_file(config_path))
            throw sdk::Error(CDZ_STATUS_NOT_FOUND, "config file not found: " + config_path.string() +
                                                  " (set config = \"hubert_base\", \"hubert_large\", \"hubert_xlarge\" "
                                                  "or a config.json)");
        config = HubertConfig::from_file(config_path);
    }
    const c10::Device device = codec_plugin::device_of(args, p);
    const std::filesystem::path kmeans_path = p.string("kmeans");
    KMeansTokenizer kmeans = KMeansTokenizer::load(kmeans_path, device);
    int64_t layer = p.integer("layer");
    if (layer > 0 && kmeans.layer() > 0 && layer != kmeans.layer())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "layer = " + std::to_string(layer) + " but " + kmeans_path.string() +
                                                   " was made for layer " + std::to_string(kmeans.layer()));
    if (layer == 0) layer = kmeans.layer();
    if (layer == 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    kmeans_path.string() + " does not name its layer (metadata 'layer'); set the parameter layer");
    if (layer > config.num_hidden_layers)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "layer " + std::to_string(layer) + " is out of range: the model has " +
                                                   std::to_string(config.num_hidden_layers) + " layers");
    if (kmeans.dimension() != config.hidden_size)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, kmeans_path.string() + ": centroids of dimension " +
                                                   std::to_string(kmeans.dimension()) + " but the model's hidden_size is " +
                                                   std::to_string(config.hidden_size));
    codec_plugin::apply_threads(p.integer("threads"));
    auto model = std::make_unique<HubertModel>(HubertModel::load(config, checkpoint, device));
    return std::make_unique<HubertMonoCodec>(std::move(model), std::move(kmeans), layer);
}

// Encode only: the decoding functions refuse before looking at their input.
cdz_status* unsupported() {
    return sdk::guarded([] { throw sdk::Error(CDZ_STATUS_UNSUPPORTED, decode_unsupported_message); });
}

cdz_status* decode(void*, const DLTensor*, DLManagedTensor** out_audio) {
    if (out_audio) *out_audio = nullptr;
    return unsupported();
}
cdz_status* stream_create(void*, void** out_stream) {
    if (out_stream) *out_stream = nullptr;
    return unsupported();
}
cdz_status* stream_decode(void*, const DLTensor*, int, DLManagedTensor** out_audio) {
    if (out_audio) *out_audio = nullptr;
    return unsupported();
}
void stream_destroy(void*) {}

cdz_codec_vtable encode_only_vtable() {
    cdz_codec_vtable table = codec_plugin::vtable_of<make_codec>();
    table.decode = decode;
    table.stream_create = stream_create;
    table.stream_decode = stream_decode;
    table.stream_destroy = stream_destroy;
    return table;
}

const cdz_codec_vtable vtable = encode_only_vtable();

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_CODEC, "1.0.0", "HuBERT k-means units (encode only), 16 kHz, 50 Hz, one codebook",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, torch_support::describe_exception);
}
