// The `weight_precision` and `kv_precision` parameters of the plugins that
// run LlamaModel's CPU pass (backbone.llama, draft.shallow): their choices,
// their help, and packing the model's panels / choosing its caches' storage
// as they say.
#pragma once

#include <string>

#include "llama_model.h"

namespace cadenza::llama {

// "float32", "float16", nullptr: cdz_param_spec's choices.
extern const char* const weight_precision_choices[];
extern const char* const weight_precision_help;

PanelPrecision panel_precision_named(const std::string& name);

// Packs the model's panels in the named precision. float16 where the panels
// do not run (no vectorized kernel) leaves the weights float32 and says so in
// the host's log, as `plugin_name`.
void pack_panels_with_precision(LlamaModel& model, const std::string& name, const char* plugin_name);

// "float32", "float16", nullptr.
extern const char* const kv_precision_choices[];
extern const char* const kv_precision_help;

// The storage the model's KV caches take for the named precision: float16
// only where the CPU pass and its vectorized kernel run; elsewhere float32,
// said in the host's log as `plugin_name`.
KvPrecision kv_precision_for(const LlamaModel& model, const std::string& name, const char* plugin_name);

}  // namespace cadenza::llama
