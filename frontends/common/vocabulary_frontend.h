// What the vocabulary frontends share beyond their text analysis: the
// vocabulary file and the on_unknown / add_boundaries settings read from the
// pipeline, the info the host asks for, a token's symbol, and a log of the
// symbols an encoding skipped. A frontend class holds one and forwards its
// table's get_info and token_symbol to it.
#pragma once

#include <cstdint>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_params.hpp"
#include "host_bridge.h"
#include "symbol_encoder.h"
#include "vocabulary.h"

namespace cadenza::frontend {

class VocabularyFrontend {
public:
    // Reads the parameters `vocabulary`, `on_unknown` and `add_boundaries`.
    VocabularyFrontend(const sdk::Params& params, const char* plugin_name);

    const Vocabulary& vocabulary() const { return vocabulary_; }
    const EncoderOptions& encoder() const { return encoder_; }
    const PluginLog& log() const { return log_; }

    // With `boundaries_if_added`, <bos> and <eos> are reported only when the
    // frontend adds them (add_boundaries), -1 otherwise.
    void get_info(cdz_frontend_info* out, bool boundaries_if_added = false) const;
    const char* token_symbol(int32_t id) const { return vocabulary_.checked_symbol(id).c_str(); }
    // A reporter writing each skipped symbol to the debug log, or none when
    // nobody listens.
    SkipReporter skip_reporter() const;

private:
    Vocabulary vocabulary_;
    EncoderOptions encoder_;
    PluginLog log_;
};

}  // namespace cadenza::frontend
