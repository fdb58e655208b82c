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
#include "cadenza/sdk/plugin_error.hpp"
#include "kv_cache.h"
#include "llama_model.h"
#include "thread_policy.h"
#include "torch_device.h"

namespace {

using cadenza::sdk::Error;
using namespace cadenza::llama;

const cdz_host_api* host = nullptr;
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
    {"max_positions", CDZ_PARAM_INT, "0", 1, 0, 1048576, nullptr,
     "longest sequence; 0: the config's max_position_embeddings"},
};

struct Backbone {
    std::unique_ptr<LlamaModel> model;
    cdz_backbone_info info{};
};

struct Session {
    const Backbone* backbone;
    KvCache cache;
};

cdz_status* status_of(const std::exception& e, cdz_status_code fallback) {
    const auto* known = dynamic_cast<const Error*>(&e);
    const std::string message = std::string(plugin_name) + ": " + e.what();
    return host->status_create(known ? known->code() : fallback, message.c_str());
}

template <typename Body>
cdz_status* guarded(Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (const std::bad_alloc&) {
        return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "backbone.llama: out of memory");
    } catch (const c10::Error& e) {  // what() carries LibTorch's whole backtrace
        const std::string message = std::string(plugin_name) + ": LibTorch: " + e.what_without_backtrace();
        return host->status_create(CDZ_STATUS_INTERNAL, message.c_str());
    } catch (const std::exception& e) {
        return status_of(e, CDZ_STATUS_INTERNAL);
    } catch (...) {
        return host->status_create(CDZ_STATUS_INTERNAL, "backbone.llama: unknown exception");
    }
}

// A status from the host becomes an exception carrying its code and message.
void throw_if_error(cdz_status* status) {
    if (!status) return;
    const cdz_status_code code = host->status_code(status);
    const std::string message = host->status_message(status);
    host->status_release(status);
    throw Error(code, message);
}

int64_t get_int(const cdz_params* params, const char* key) {
    int64_t value = 0;
    throw_if_error(host->params_get_int(params, key, &value));
    return value;
}

bool get_bool(const cdz_params* params, const char* key) {
    int value = 0;
    throw_if_error(host->params_get_bool(params, key, &value));
    return value != 0;
}

std::string get_string(const cdz_params* params, const char* key) {
    const char* value = nullptr;
    throw_if_error(host->params_get_string(params, key, &value));
    return value;
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return guarded([&] {
        auto backbone = std::make_unique<Backbone>();
        const std::filesystem::path checkpoint = get_string(args->params, "checkpoint");
        std::filesystem::path config_path = get_string(args->params, "config");
        if (config_path.empty())
            config_path = (std::filesystem::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path()) / "config.json";
        apply_thread_policy(static_cast<int>(get_int(args->params, "threads")));
        const at::Device device = cadenza::torch_device(args->device && *args->device ? args->device : "cpu");
        const LlamaConfig config = LlamaConfig::from_file(config_path);
        c10::InferenceMode inference;
        LlamaWeights weights = LlamaWeights::load(checkpoint, config, device);
        const int64_t max_positions = get_int(args->params, "max_positions") > 0 ? get_int(args->params, "max_positions")
                                                                                : config.max_position_embeddings;

        cdz_backbone_info& info = backbone->info;
        info.struct_size = sizeof(info);
        info.vocab_size = config.vocab_size;
        info.hidden_size = config.hidden_size;
        info.max_sequence_length = max_positions;
        info.tokens_per_node = 1;
        info.text_token_offset = get_int(args->params, "text_token_offset");
        info.text_token_count = get_int(args->params, "text_token_count");
        info.audio_token_offset = get_int(args->params, "audio_token_offset");
        info.audio_token_count = get_int(args->params, "audio_token_count");
        info.audio_start_token = static_cast<int32_t>(get_int(args->params, "audio_start_token"));
        info.end_token = static_cast<int32_t>(get_int(args->params, "end_token"));
        info.weight_bytes = weights.byte_size();
        info.phone_markers = get_bool(args->params, "phone_markers") ? 1 : 0;
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
        *out_ctx = backbone.release();
    });
}

void destroy(void* ctx) { delete static_cast<Backbone*>(ctx); }

cdz_status* get_info(void* ctx, cdz_backbone_info* out) {
    return guarded([&] {
        const cdz_backbone_info& info = static_cast<const Backbone*>(ctx)->info;
        const uint32_t size = out->struct_size;
        std::memcpy(out, &info, std::min<size_t>(size, sizeof(info)));
        out->struct_size = size;
    });
}

cdz_status* session_create(void* ctx, int64_t capacity, void** out_session) {
    return guarded([&] {
        const auto* backbone = static_cast<const Backbone*>(ctx);
        c10::InferenceMode inference;
        *out_session = new Session{backbone, KvCache(backbone->model->config(), capacity, backbone->model->device())};
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

// Hands a tensor across the boundary without copying: the DLManagedTensor
// owns a reference to it, released by the deleter.
struct ExportedTensor {
    DLManagedTensor managed;
    at::Tensor tensor;
    std::vector<int64_t> shape;
};

DLManagedTensor* export_tensor(at::Tensor tensor) {
    auto* exported = new ExportedTensor{};
    exported->tensor = tensor.to(at::kCPU).contiguous();
    exported->shape.assign(exported->tensor.sizes().begin(), exported->tensor.sizes().end());
    DLTensor& dl = exported->managed.dl_tensor;
    dl.data = exported->tensor.data_ptr<float>();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(exported->shape.size());
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = exported->shape.data();
    dl.strides = nullptr;
    dl.byte_offset = 0;
    exported->managed.manager_ctx = exported;
    exported->managed.deleter = [](DLManagedTensor* self) { delete static_cast<ExportedTensor*>(self->manager_ctx); };
    return &exported->managed;
}

cdz_status* session_forward(void* raw, const cdz_token_tree* tree, int want_hidden, cdz_backbone_output* out) {
    return guarded([&] {
        auto* session = static_cast<Session*>(raw);
        if (!tree || tree->node_count <= 0 || !tree->tokens || !tree->parents)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "an empty or malformed tree");
        if (tree->tokens_per_node != 1) throw Error(CDZ_STATUS_UNSUPPORTED, "one token per node only");
        c10::InferenceMode inference;
        const std::vector<int32_t> tokens(tree->tokens, tree->tokens + tree->node_count);
        const std::vector<int32_t> parents(tree->parents, tree->parents + tree->node_count);
        // The host says from which node on it reads logits (ABI 0.3).
        const bool has_logits_from = out->struct_size >= offsetof(cdz_backbone_output, logits_from) + sizeof(int32_t);
        const int64_t logits_from = has_logits_from ? std::clamp<int64_t>(out->logits_from, 0, tree->node_count) : 0;
        TreeOutput result = session->backbone->model->forward_tree(session->cache, tokens, parents, logits_from);
        out->logits = result.logits.defined() ? export_tensor(result.logits) : nullptr;
        out->hidden = want_hidden ? export_tensor(result.hidden) : nullptr;
    });
}

cdz_status* session_commit(void* raw, const int32_t* path, int32_t length) {
    return guarded([&] {
        if (length > 0 && !path) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "path is NULL");
        c10::InferenceMode inference;
        static_cast<Session*>(raw)->cache.commit(std::vector<int64_t>(path, path + length));
    });
}

cdz_status* session_rewind(void* raw, int64_t length) {
    return guarded([&] { static_cast<Session*>(raw)->cache.rewind(length); });
}

cdz_status* session_length(void* raw, int64_t* out) {
    return guarded([&] { *out = static_cast<Session*>(raw)->cache.length(); });
}

const cdz_backbone_vtable vtable = {
    sizeof(cdz_backbone_vtable), create, destroy, get_info, session_create, session_destroy,
    session_forward, session_commit, session_rewind, session_length,
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
    if (host_api->abi_major != CDZ_PLUGIN_ABI_MAJOR || host_api->struct_size < sizeof(cdz_host_api))
        return host_api->status_create(CDZ_STATUS_ABI_MISMATCH, "backbone.llama: the host's services are too old");
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}
