// frontend.chars: normalized UTF-8 text to character ids through a
// vocabulary file. The C ABI surface: descriptor, vtable, entry point.
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "vocabulary.h"
#include "text_normalizer.h"

namespace cadenza::frontend {
namespace {

constexpr const char* plugin_name = "frontend.chars";

struct CharsFrontend {
    Vocabulary vocabulary;
    NormalizerOptions normalizer;
    EncoderOptions encoder;
};

CharsFrontend& frontend_of(void* ctx) {
    if (!ctx) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the frontend instance is NULL");
    return *static_cast<CharsFrontend*>(ctx);
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) noexcept {
    return sdk::guarded([&] {
        if (!args || !out_ctx) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "args or out_ctx is NULL");
        *out_ctx = nullptr;
        const sdk::Params params(*args);
        auto frontend = std::make_unique<CharsFrontend>();
        frontend->normalizer.lowercase = params.boolean("lowercase");
        frontend->encoder.on_unknown = parse_unknown_policy(params.string("on_unknown"));
        frontend->encoder.add_boundaries = params.boolean("add_boundaries");
        frontend->vocabulary = Vocabulary::load(params.string("vocabulary"));
        *out_ctx = frontend.release();
    });
}

void destroy(void* ctx) noexcept { delete static_cast<CharsFrontend*>(ctx); }

cdz_status* get_info(void* ctx, cdz_frontend_info* out) noexcept {
    return sdk::guarded([&] {
        const CharsFrontend& frontend = frontend_of(ctx);
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out is NULL");
        out->struct_size = sizeof(cdz_frontend_info);
        out->vocab_size = frontend.vocabulary.size();
        out->bos_id = frontend.vocabulary.bos_id();
        out->eos_id = frontend.vocabulary.eos_id();
        out->pad_id = frontend.vocabulary.pad_id();
    });
}

cdz_status* encode(void* ctx, const char* utf8_text, DLManagedTensor** out_ids) noexcept {
    return sdk::guarded([&] {
        const CharsFrontend& frontend = frontend_of(ctx);
        if (!utf8_text || !out_ids) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "text or out_ids is NULL");
        *out_ids = nullptr;
        const std::u32string text = normalize_text(utf8_text, frontend.normalizer);
        const PluginLog log(sdk::host(), plugin_name);
        SkipReporter report_skip;
        if (log.enabled(CDZ_LOG_DEBUG))
            report_skip = [&](const std::string& message) { log.write(CDZ_LOG_DEBUG, message); };
        const std::vector<int32_t> ids =
            encode_symbols(frontend.vocabulary, text, frontend.encoder,
                           SymbolNames{"character", "the normalized text"}, report_skip);
        *out_ids = make_ids_tensor(sdk::host(), ids);
    });
}

cdz_status* token_symbol(void* ctx, int32_t id, const char** out_symbol) noexcept {
    return sdk::guarded([&] {
        const CharsFrontend& frontend = frontend_of(ctx);
        if (!out_symbol) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out_symbol is NULL");
        *out_symbol = frontend.vocabulary.checked_symbol(id).c_str();
    });
}

const cdz_param_spec params[] = {
    {"vocabulary", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "vocabulary file: one symbol per line, id = line number, <space> for the space"},
    {"lowercase", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "lowercase ASCII, Latin-1 and Latin Extended-A letters before lookup"},
    {"on_unknown", CDZ_PARAM_STRING, "\"skip\"", 0, 0.0, 0.0, unknown_policy_choices,
     "a character not in the vocabulary: \"skip\" (to <unk> if present, else dropped) or \"error\""},
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
    "normalized UTF-8 text to character ids through a vocabulary file",
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
