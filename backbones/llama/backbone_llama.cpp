// backbone.llama: a LLaMA-architecture target model (LLaSA, CosyVoice 2's
// Qwen2 LM) from a Hugging Face safetensors checkpoint, with a preallocated
// KV cache per session, tree verification and compaction to the accepted path.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <cstring>
#include <vector>
#include <string>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_params.hpp"
#include "kv_cache.h"
#include "libtorch_boundary.h"
#include "llama_model.h"
#include "thread_policy.h"
#include "torch_device.h"
#include "weight_precision.h"

namespace {

using cadenza::sdk::Error;
namespace sdk = cadenza::sdk;
using namespace cadenza::llama;

constexpr const char* plugin_name = "backbone.llama";

const cdz_param_spec params[] = {
    {"checkpoint", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "safetensors weights: a file, an index .json, or a directory holding them"},
    {"config", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr,
     "Hugging Face config.json; empty: config.json next to the checkpoint"},
    {"text_token_offset", CDZ_PARAM_INT, "0", 1, 0, 2147483647, nullptr, "backbone id of frontend id 0"},
    {"text_token_count", CDZ_PARAM_INT, nullptr, 1, 1, 2147483647, nullptr, "how many text ids follow it"},
    {"audio_token_offset", CDZ_PARAM_INT, nullptr, 1, 0, 2147483647, nullptr,
     "backbone id of codec code 0 (LLaSA: 128264)"},
    {"audio_token_count", CDZ_PARAM_INT, nullptr, 1, 1, 2147483647, nullptr, "codec codes (LLaSA: 65536)"},
    {"audio_start_token", CDZ_PARAM_INT, "-1", 1, -1, 2147483647, nullptr, "placed after the text; -1: none"},
    {"end_token", CDZ_PARAM_INT, "-1", 1, -1, 2147483647, nullptr, "ends the audio (LLaSA: 128261); -1: none"},
    {"phone_markers", CDZ_PARAM_BOOL, "false", 0, 0.0, 0.0, nullptr,
     "the model also emits text ids among its audio tokens (a target trained with `corpus tts --phone-markers`)"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr, "intra-op threads; 0: one per core"},
    {"prefill_threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "threads that split the prompt's prefill (a pass of 64 tokens or more, the same result to the bit); 0: one per "
     "core"},
    {"decode_threads", CDZ_PARAM_INT, "1", 1, 0, 1024, nullptr,
     "threads that split each smaller pass (a decoding step or a verification) by the matrices' columns, the same "
     "result to the bit; the others are kept between passes; 0: one per core (and at most one per core)"},
    {"max_positions", CDZ_PARAM_INT, "0", 1, 0, 1048576, nullptr,
     "longest sequence; 0: the config's max_position_embeddings"},
    {"weight_precision", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, weight_precision_choices, weight_precision_help},
    {"kv_precision", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, kv_precision_choices, kv_precision_help},
};

struct Backbone {
    std::unique_ptr<LlamaModel> model;
    KvPrecision kv_precision = KvPrecision::float32;
    cdz_backbone_info info{};
};

struct Session {
    const Backbone* backbone;
    KvCache cache;
    // Kept across passes: no pass allocates more than its outputs.
    std::vector<int32_t> tokens, parents;
    TreePassScratch scratch;
};

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return sdk::guarded([&] {
        const sdk::Params values(*args);
        auto backbone = std::make_unique<Backbone>();
        const std::filesystem::path checkpoint = values.string("checkpoint");
        std::filesystem::path config_path = values.string("config");
        if (config_path.empty())
            config_path = (std::filesystem::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path()) / "config.json";
        apply_thread_policy(static_cast<int>(values.integer("threads")));
        const at::Device device = cadenza::torch_device(args->device && *args->device ? args->device : "cpu");
        const LlamaConfig config = LlamaConfig::from_file(config_path);
        c10::InferenceMode inference;
        LlamaWeights weights = LlamaWeights::load(checkpoint, config, device);
        const int64_t max_positions = values.integer("max_positions") > 0 ? values.integer("max_positions")
                                                                                : config.max_position_embeddings;

        cdz_backbone_info& info = backbone->info;
        info.struct_size = sizeof(info);
        info.vocab_size = config.vocab_size;
        info.hidden_size = config.hidden_size;
        info.max_sequence_length = max_positions;
        info.tokens_per_node = 1;
        info.text_token_offset = values.integer("text_token_offset");
        info.text_token_count = values.integer("text_token_count");
        info.audio_token_offset = values.integer("audio_token_offset");
        info.audio_token_count = values.integer("audio_token_count");
        info.audio_start_token = static_cast<int32_t>(values.integer("audio_start_token"));
        info.end_token = static_cast<int32_t>(values.integer("end_token"));
        info.weight_bytes = weights.byte_size();
        info.phone_markers = values.boolean("phone_markers") ? 1 : 0;
        auto within = [&](int64_t first, int64_t count, const char* what) {
            if (first + count > config.vocab_size)
                throw Error(CDZ_STATUS_INVALID_CONFIG, std::string(what) + " range [" + std::to_string(first) + ", " +
                                                           std::to_string(first + count) + ") exceeds the vocabulary of " +
                                                           std::to_string(config.vocab_size) + " (" +
                                                           config_path.string() + ")");
        };
        within(info.text_token_offset, info.text_token_count, "the text token");
        within(info.audio_token_offset, info.audio_token_count, "the audio token");
        within(std::max(info.audio_start_token, info.end_token), 1, "the special token");
        backbone->model = std::make_unique<LlamaModel>(std::move(weights), max_positions);
        pack_panels_with_precision(*backbone->model, values.string("weight_precision"), plugin_name);
        backbone->kv_precision = kv_precision_for(*backbone->model, values.string("kv_precision"), plugin_name);
        backbone->info.weight_bytes = backbone->model->streamed_weight_bytes();
        backbone->model->set_prefill_threads(static_cast<int>(values.integer("prefill_threads")));
        backbone->model->set_decode_threads(static_cast<int>(values.integer("decode_threads")));
        *out_ctx = backbone.release();
    });
}

void destroy(void* ctx) { delete static_cast<Backbone*>(ctx); }

cdz_status* get_info(void* ctx, cdz_backbone_info* out) {
    return sdk::guarded([&] {
        const cdz_backbone_info& info = static_cast<const Backbone*>(ctx)->info;
        const uint32_t size = out->struct_size;
        std::memcpy(out, &info, std::min<size_t>(size, sizeof(info)));
        out->struct_size = size;
    });
}

cdz_status* session_create(void* ctx, int64_t capacity, void** out_session) {
    return sdk::guarded([&] {
        const auto* backbone = static_cast<const Backbone*>(ctx);
        c10::InferenceMode inference;
        *out_session = new Session{backbone, KvCache(backbone->model->config(), capacity, backbone->model->device(),
                                                       backbone->kv_precision)};
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }


cdz_status* session_forward(void* raw, const cdz_token_tree* tree, int want_hidden, cdz_backbone_output* out) {
    return sdk::guarded([&] {
        auto* session = static_cast<Session*>(raw);
        if (!tree || tree->node_count <= 0 || !tree->tokens || !tree->parents)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "an empty or malformed tree");
        if (tree->tokens_per_node != 1) throw Error(CDZ_STATUS_UNSUPPORTED, "one token per node only");
        c10::InferenceMode inference;
        std::vector<int32_t>& tokens = session->tokens;
        std::vector<int32_t>& parents = session->parents;
        tokens.assign(tree->tokens, tree->tokens + tree->node_count);
        parents.assign(tree->parents, tree->parents + tree->node_count);
        // The host says from which node on it reads logits (logits_from).
        const bool has_logits_from = out->struct_size >= offsetof(cdz_backbone_output, logits_from) + sizeof(int32_t);
        const int64_t logits_from = has_logits_from ? std::clamp<int64_t>(out->logits_from, 0, tree->node_count) : 0;
        TreeOutput result =
            session->backbone->model->forward_tree(session->cache, tokens, parents, logits_from, &session->scratch);
        out->logits = result.logits.defined() ? cadenza::torch_support::export_cpu_tensor(result.logits, at::kFloat) : nullptr;
        out->hidden = want_hidden ? cadenza::torch_support::export_cpu_tensor(result.hidden, at::kFloat) : nullptr;
    });
}

cdz_status* session_commit(void* raw, const int32_t* path, int32_t length) {
    return sdk::guarded([&] {
        if (length > 0 && !path) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "path is NULL");
        c10::InferenceMode inference;
        static_cast<Session*>(raw)->cache.commit(std::vector<int64_t>(path, path + length));
    });
}

cdz_status* session_rewind(void* raw, int64_t length) {
    return sdk::guarded([&] { static_cast<Session*>(raw)->cache.rewind(length); });
}

cdz_status* session_length(void* raw, int64_t* out) {
    return sdk::guarded([&] { *out = static_cast<Session*>(raw)->cache.length(); });
}

// Every layer's keys or values of positions [0, count): [layers, kv_heads, count, head_dim].
at::Tensor committed_rows(const KvCache& cache, int64_t layers, int64_t count, bool keys) {
    std::vector<at::Tensor> rows;
    rows.reserve(static_cast<size_t>(layers));
    for (int64_t layer = 0; layer < layers; ++layer)
        rows.push_back((keys ? cache.keys(layer) : cache.values(layer)).narrow(1, 0, count));
    return at::stack(rows);
}

cdz_status* session_read_cache(void* raw, int64_t count, DLManagedTensor** out_keys, DLManagedTensor** out_values) {
    return sdk::guarded([&] {
        if (!out_keys || !out_values) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "out_keys or out_values is NULL");
        *out_keys = *out_values = nullptr;
        const auto* session = static_cast<const Session*>(raw);
        const KvCache& cache = session->cache;
        if (count < 1 || count > cache.length())
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "asked for the cache's first " + std::to_string(count) +
                                                         " positions of " + std::to_string(cache.length()) +
                                                         " committed");
        c10::InferenceMode inference;
        const int64_t layers = session->backbone->model->config().num_hidden_layers;
        auto release = [](DLManagedTensor* t) {
            if (t && t->deleter) t->deleter(t);
        };
        std::unique_ptr<DLManagedTensor, decltype(release)> keys(
            cadenza::torch_support::export_cpu_tensor(committed_rows(cache, layers, count, true), at::kFloat), release);
        *out_values =
            cadenza::torch_support::export_cpu_tensor(committed_rows(cache, layers, count, false), at::kFloat);
        *out_keys = keys.release();
    });
}

const cdz_backbone_vtable vtable = {
    sizeof(cdz_backbone_vtable), create, destroy, get_info, session_create, session_destroy,
    session_forward, session_commit, session_rewind, session_length, session_read_cache,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_BACKBONE, "1.0.0",
    "LLaMA-architecture target (LLaSA, Qwen2) from safetensors, with a KV cache and tree verification",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return cadenza::sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, cadenza::torch_support::describe_exception);
}
