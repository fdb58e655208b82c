// frontend.espeak: UTF-8 text to IPA phoneme ids through libespeak-ng and a
// vocabulary file. The C ABI surface: descriptor, vtable, entry point.
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "espeak_engine.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "utf8.h"
#include "vocabulary_frontend.h"
#include "ipa_tokenizer.h"
#include "voice_scripts.h"

namespace cadenza::frontend {
namespace {

constexpr const char* plugin_name = "frontend.espeak";

class EspeakFrontend {
public:
    explicit EspeakFrontend(const cdz_instance_args& args) : EspeakFrontend(sdk::Params(args)) {}

    void get_info(cdz_frontend_info* out) const { common_.get_info(out); }

    DLManagedTensor* encode(const char* utf8_text) const {
        if (!utf8_text) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the text is NULL");
        scripts_.check(decode_utf8_or_throw(utf8_text));  // strict: espeak-ng would guess at bad bytes
        const std::string ipa = espeak::text_to_ipa(voice_, utf8_text);
        if (common_.log().enabled(CDZ_LOG_TRACE)) common_.log().write(CDZ_LOG_TRACE, "IPA: " + ipa);
        const std::vector<int32_t> ids = encode_symbols(common_.vocabulary(), tokenize_ipa(ipa), common_.encoder(),
                                                        SymbolNames{"IPA symbol", "the phonemes"},
                                                        common_.skip_reporter());
        return make_ids_tensor(sdk::host(), ids);
    }

    const char* token_symbol(int32_t id) const { return common_.token_symbol(id); }

private:
    explicit EspeakFrontend(const sdk::Params& params)
        : voice_(params.string("voice")), common_(params, plugin_name) {
        espeak::initialize(params.string("data_path"));
        scripts_ = espeak::VoiceScripts::for_language(espeak::voice_language(voice_));
    }

    std::string voice_;
    VocabularyFrontend common_;
    espeak::VoiceScripts scripts_;  // of the voice: what is passed to espeak-ng
};

const cdz_param_spec params[] = {
    {"vocabulary", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "vocabulary file of IPA symbols: one per line, id = line number, <space> between words"},
    {"voice", CDZ_PARAM_STRING, "\"en-us\"", 0, 0.0, 0.0, nullptr,
     "espeak-ng voice or language, e.g. \"en-us\", \"en-gb\""},
    {"on_unknown", CDZ_PARAM_STRING, "\"skip\"", 0, 0.0, 0.0, unknown_policy_choices,
     "an IPA symbol not in the vocabulary: \"skip\" (to <unk> if present, else dropped) or \"error\""},
    {"add_boundaries", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "wrap the ids with <bos> and <eos> when the vocabulary has them"},
    {"data_path", CDZ_PARAM_STRING, "\"\"", 0, 0.0, 0.0, nullptr,
     "espeak-ng-data directory (or its parent); \"\" for the library's default"},
};

const cdz_frontend_vtable vtable = {
    sizeof(cdz_frontend_vtable),          sdk::create<EspeakFrontend>,           sdk::destroy<EspeakFrontend>,
    sdk::method<&EspeakFrontend::get_info>, sdk::method<&EspeakFrontend::encode>, sdk::method<&EspeakFrontend::token_symbol>,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_FRONTEND,
    "1.0.0",
    "UTF-8 text to IPA phoneme ids through espeak-ng and a vocabulary file",
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
