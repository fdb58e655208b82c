// The `weight_precision` parameter of the plugins that run LlamaModel's CPU
// pass (backbone.llama, draft.shallow): its choices, its help, and packing
// the model's panels as it says.
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

}  // namespace cadenza::llama
