#include "vocabulary_frontend.h"

#include <string>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::frontend {

VocabularyFrontend::VocabularyFrontend(const sdk::Params& params, const char* plugin_name)
    : log_(sdk::host(), plugin_name) {
    encoder_.on_unknown = parse_unknown_policy(params.string("on_unknown"));
    encoder_.add_boundaries = params.boolean("add_boundaries");
    vocabulary_ = Vocabulary::load(params.string("vocabulary"));
}

void VocabularyFrontend::get_info(cdz_frontend_info* out, bool boundaries_if_added) const {
    if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "out is NULL");
    const bool boundaries = encoder_.add_boundaries || !boundaries_if_added;
    out->struct_size = sizeof(cdz_frontend_info);
    out->vocab_size = vocabulary_.size();
    out->bos_id = boundaries ? vocabulary_.bos_id() : -1;
    out->eos_id = boundaries ? vocabulary_.eos_id() : -1;
    out->pad_id = vocabulary_.pad_id();
}

SkipReporter VocabularyFrontend::skip_reporter() const {
    if (!log_.enabled(CDZ_LOG_DEBUG)) return {};
    return [this](const std::string& message) { log_.write(CDZ_LOG_DEBUG, message); };
}

}  // namespace cadenza::frontend
