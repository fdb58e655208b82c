// frontend.flite: UTF-8 text to CMU phone ids through flite's US English text
// analysis and a vocabulary file (one phone per line). The phones are the
// ones the speech corpus's voices speak and its .phones alignments name, so
// it is the frontend of targets trained with phone markers. The C ABI
// surface: descriptor, vtable, entry point.
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "flite_phonemizer.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "utf8.h"
#include "vocabulary_frontend.h"

namespace cadenza::frontend {
namespace {

constexpr const char* plugin_name = "frontend.flite";

class FliteFrontend {
public:
    explicit FliteFrontend(const cdz_instance_args& args) : common_(sdk::Params(args), plugin_name) {}

    // <bos> and <eos> only when it adds them.
    void get_info(cdz_frontend_info* out) const { common_.get_info(out, true); }

    DLManagedTensor* encode(const char* utf8_text) const {
        if (!utf8_text) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the text is NULL");
        decode_utf8_or_throw(utf8_text);  // strict: flite reads bytes
        const std::vector<std::string> phones = flite::text_to_phones(utf8_text);
        if (common_.log().enabled(CDZ_LOG_TRACE)) {
            std::string listed;
            for (const auto& phone : phones) listed += (listed.empty() ? "" : " ") + phone;
            common_.log().write(CDZ_LOG_TRACE, "phones: " + listed);
        }
        return make_ids_tensor(sdk::host(), phone_ids(phones));
    }

    const char* token_symbol(int32_t id) const { return common_.token_symbol(id); }

private:
    std::vector<int32_t> phone_ids(const std::vector<std::string>& phones) const {
        const Vocabulary& vocabulary = common_.vocabulary();
        const EncoderOptions& encoder = common_.encoder();
        std::vector<int32_t> ids;
        if (encoder.add_boundaries && vocabulary.bos_id() >= 0) ids.push_back(vocabulary.bos_id());
        for (size_t i = 0; i < phones.size(); ++i) {
            const int32_t id = vocabulary.find(phones[i]);
            if (id >= 0) {
                ids.push_back(id);
                continue;
            }
            const std::string what = "phone '" + phones[i] + "' at position " + std::to_string(i) +
                                     " is not in the vocabulary " + vocabulary.source();
            if (encoder.on_unknown == UnknownPolicy::error) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, what);
            if (common_.log().enabled(CDZ_LOG_DEBUG))
                common_.log().write(CDZ_LOG_DEBUG, what + (vocabulary.unk_id() >= 0 ? ": <unk>" : ": dropped"));
            if (vocabulary.unk_id() >= 0) ids.push_back(vocabulary.unk_id());
        }
        if (encoder.add_boundaries && vocabulary.eos_id() >= 0) ids.push_back(vocabulary.eos_id());
        return ids;
    }

    VocabularyFrontend common_;
};

const cdz_param_spec params[] = {
    {"vocabulary", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "vocabulary file of CMU phones (\"aa\", \"pau\"): one per line, id = line number"},
    {"on_unknown", CDZ_PARAM_STRING, "\"skip\"", 0, 0.0, 0.0, unknown_policy_choices,
     "a phone not in the vocabulary: \"skip\" (to <unk> if present, else dropped) or \"error\""},
    {"add_boundaries", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "wrap the ids with <bos> and <eos> when the vocabulary has them"},
};

const cdz_frontend_vtable vtable = {
    sizeof(cdz_frontend_vtable),         sdk::create<FliteFrontend>,           sdk::destroy<FliteFrontend>,
    sdk::method<&FliteFrontend::get_info>, sdk::method<&FliteFrontend::encode>, sdk::method<&FliteFrontend::token_symbol>,
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
