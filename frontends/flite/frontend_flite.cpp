// frontend.flite: UTF-8 text to CMU phone ids through flite's US English text
// analysis and a vocabulary file (one phone per line). The phones are the
// ones the speech corpus's voices speak and its .phones alignments name, so
// it is the frontend of targets trained with phone markers. The C ABI
// surface: descriptor, vtable, entry point.
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "flite_phonemizer.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "utf8.h"
#include "vocabulary.h"

namespace cadenza::frontend {
namespace {

constexpr const char* plugin_name = "frontend.flite";

struct FliteFrontend {
    Vocabulary vocabulary;
    EncoderOptions encoder;
};

FliteFrontend& frontend_of(void* ctx) {
    if (!ctx) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the frontend instance is NULL");
    return *static_cast<FliteFrontend*>(ctx);
}

std::vector<int32_t> phone_ids(const FliteFrontend& frontend, const std::vector<std::string>& phones,
                               const PluginLog& log) {
    const Vocabulary& vocabulary = frontend.vocabulary;
    std::vector<int32_t> ids;
    if (frontend.encoder.add_boundaries && vocabulary.bos_id() >= 0) ids.push_back(vocabulary.bos_id());
    for (size_t i = 0; i < phones.size(); ++i) {
        const int32_t id = vocabulary.find(phones[i]);
        if (id >= 0) {
            ids.push_back(id);
            continue;
        }
        const std::string what = "phone '" + phones[i] + "' at position " + std::to_string(i) +
                                  " is not in the vocabulary " + vocabulary.source();
        if (frontend.encoder.on_unknown == UnknownPolicy::error) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what);
        if (log.enabled(CDZ_LOG_DEBUG)) log.write(CDZ_LOG_DEBUG, what + (vocabulary.unk_id() >= 0 ? ": <unk>" : ": dropped"));
        if (vocabulary.unk_id() >= 0) ids.push_back(vocabulary.unk_id());
    }
    if (frontend.encoder.add_boundaries && vocabulary.eos_id() >= 0) ids.push_back(vocabulary.eos_id());
    return ids;
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) noexcept {
    return sdk::guarded([&] {
        if (!args || !out_ctx) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "args or out_ctx is NULL");
        *out_ctx = nullptr;
        const sdk::Params params(*args);
        auto frontend = std::make_unique<FliteFrontend>();
        frontend->encoder.on_unknown = parse_unknown_policy(params.string("on_unknown"));
        frontend->encoder.add_boundaries = params.boolean("add_boundaries");
        frontend->vocabulary = Vocabulary::load(params.string("vocabulary"));
        *out_ctx = frontend.release();
    });
}

void destroy(void* ctx) noexcept { delete static_cast<FliteFrontend*>(ctx); }

cdz_status* get_info(void* ctx, cdz_frontend_info* out) noexcept {
    return sdk::guarded([&] {
        const FliteFrontend& frontend = frontend_of(ctx);
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out is NULL");
        out->struct_size = sizeof(cdz_frontend_info);
        out->vocab_size = frontend.vocabulary.size();
        out->bos_id = frontend.encoder.add_boundaries ? frontend.vocabulary.bos_id() : -1;
        out->eos_id = frontend.encoder.add_boundaries ? frontend.vocabulary.eos_id() : -1;
        out->pad_id = frontend.vocabulary.pad_id();
    });
}

cdz_status* encode(void* ctx, const char* utf8_text, DLManagedTensor** out_ids) noexcept {
    return sdk::guarded([&] {
        const FliteFrontend& frontend = frontend_of(ctx);
        if (!utf8_text || !out_ids) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "text or out_ids is NULL");
        *out_ids = nullptr;
        decode_utf8_or_throw(utf8_text);  // strict: flite reads bytes
        const std::vector<std::string> phones = flite::text_to_phones(utf8_text);
        const PluginLog log(sdk::host(), plugin_name);
        if (log.enabled(CDZ_LOG_TRACE)) {
            std::string listed;
            for (const auto& phone : phones) listed += (listed.empty() ? "" : " ") + phone;
            log.write(CDZ_LOG_TRACE, "phones: " + listed);
        }
        *out_ids = make_ids_tensor(sdk::host(), phone_ids(frontend, phones, log));
    });
}

cdz_status* token_symbol(void* ctx, int32_t id, const char** out_symbol) noexcept {
    return sdk::guarded([&] {
        const FliteFrontend& frontend = frontend_of(ctx);
        if (!out_symbol) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out_symbol is NULL");
        *out_symbol = frontend.vocabulary.checked_symbol(id).c_str();
    });
}

const cdz_param_spec params[] = {
    {"vocabulary", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "vocabulary file of CMU phones (\"aa\", \"pau\"): one per line, id = line number"},
    {"on_unknown", CDZ_PARAM_STRING, "\"skip\"", 0, 0.0, 0.0, unknown_policy_choices,
     "a phone not in the vocabulary: \"skip\" (to <unk> if present, else dropped) or \"error\""},
    {"add_boundaries", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "wrap the ids with <bos> and <eos> when the vocabulary has them"},
};

const cdz_frontend_vtable vtable = {
    sizeof(cdz_frontend_vtable), create, destroy, get_info, encode, token_symbol,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_FRONTEND,
    "1.0.0",
    "UTF-8 text to CMU phone ids through flite's US English text analysis and a vocabulary file",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace
}  // namespace cadenza::frontend

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    using namespace cadenza::frontend;
    return cadenza::sdk::enter_plugin(host, out, descriptors, 1, nullptr);  // messages as thrown: the host names the stage
}
