#include "weight_precision.h"

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::llama {

const char* const weight_precision_choices[] = {"float32", "float16", nullptr};

const char* const weight_precision_help =
    "how the CPU pass holds the projections: float32 as trained, or float16 (each weight rounded to the nearest "
    "half, converted back as it is loaded; half the bytes a pass streams). float16 needs the AVX-512 kernel; "
    "elsewhere the weights stay float32, with a warning";

PanelPrecision panel_precision_named(const std::string& name) {
    if (name == "float16") return PanelPrecision::float16;
    if (name == "float32") return PanelPrecision::float32;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "unknown weight precision '" + name + "' (float32 or float16)");
}

void pack_panels_with_precision(LlamaModel& model, const std::string& name, const char* plugin_name) {
    const PanelPrecision precision = panel_precision_named(name);
    if (!model.pack_panels(precision) && precision == PanelPrecision::float16 && sdk::host().log_enabled(CDZ_LOG_WARN))
        sdk::host().log(CDZ_LOG_WARN, plugin_name,
                        "weight_precision = \"float16\" needs the CPU pass's AVX-512 kernel, which does not run here: "
                        "the weights stay float32");
}

}  // namespace cadenza::llama
