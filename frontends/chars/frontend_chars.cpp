// frontend.chars: normalized UTF-8 text to character ids through a
// vocabulary file. The C ABI surface: descriptor, vtable, entry point.
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "vocabulary_frontend.h"
#include "text_normalizer.h"

namespace cadenza::frontend {
namespace {

constexpr const char* plugin_name = "frontend.chars";

class CharsFrontend {
public:
    explicit CharsFrontend(const cdz_instance_args& args) : CharsFrontend(sdk::Params(args)) {}

    void get_info(cdz_frontend_info* out) const { common_.get_info(out); }

    DLManagedTensor* encode(const char* utf8_text) const {
        if (!utf8_text) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the text is NULL");
        const std::u32string text = normalize_text(utf8_text, normalizer_);
        const std::vector<int32_t> ids =
            encode_symbols(common_.vocabulary(), text, common_.encoder(),
                           SymbolNames{"character", "the normalized text"}, common_.skip_reporter());
        return make_ids_tensor(sdk::host(), ids);
    }

    const char* token_symbol(int32_t id) const { return common_.token_symbol(id); }

private:
    explicit CharsFrontend(const sdk::Params& params)
        : common_(params, plugin_name), normalizer_{params.boolean("lowercase")} {}

    VocabularyFrontend common_;
    NormalizerOptions normalizer_;
};

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
    sizeof(cdz_frontend_vtable),         sdk::create<CharsFrontend>,           sdk::destroy<CharsFrontend>,
    sdk::method<&CharsFrontend::get_info>, sdk::method<&CharsFrontend::encode>, sdk::method<&CharsFrontend::token_symbol>,
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
