#include "weight_precision.h"

#include "cadenza/sdk/plugin_error.hpp"
#include "row_combinations.h"

namespace cadenza::llama {

const char* const weight_precision_choices[] = {"float32", "float16", "int8", nullptr};

const char* const weight_precision_help =
    "how the CPU pass holds the projections: float32 as trained, float16 (each weight rounded to the nearest "
    "half, converted back as it is loaded; half the bytes a pass streams), or int8 (each output's weights and each "
    "row rounded to 127 steps of their largest magnitude, the products summed in int32; a quarter of the bytes, a "
    "different model: for a copy of the target as its own draft; summed by AVX-512 VNNI, or with the same bits by "
    "AVX2). float16 and int8 need " CADENZA_VECTORIZED_KERNEL "; elsewhere the weights stay float32, with a warning";

PanelPrecision panel_precision_named(const std::string& name) {
    if (name == "float16") return PanelPrecision::float16;
    if (name == "float32") return PanelPrecision::float32;
    if (name == "int8") return PanelPrecision::int8;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "unknown weight precision '" + name + "' (float32, float16 or int8)");
}

void pack_panels_with_precision(LlamaModel& model, const std::string& name, const char* plugin_name) {
    const PanelPrecision precision = panel_precision_named(name);
    if (model.pack_panels(precision) || precision == PanelPrecision::float32 || !sdk::host().log_enabled(CDZ_LOG_WARN))
        return;
    const std::string message = "weight_precision = \"" + name + "\" needs the CPU pass's panels and " +
                                CADENZA_VECTORIZED_KERNEL + ", which do not run here: the weights stay float32";
    sdk::host().log(CDZ_LOG_WARN, plugin_name, message.c_str());
}

const char* const kv_precision_choices[] = {"float32", "float16", nullptr};

const char* const kv_precision_help =
    "how the KV cache stores keys and values: float32, or float16 (each rounded to the nearest half; half the "
    "bytes a pass's attention reads and the cache holds). float16 needs the CPU pass's " CADENZA_VECTORIZED_KERNEL
    "; elsewhere the cache stays float32, with a warning";

KvPrecision kv_precision_for(const LlamaModel& model, const std::string& name, const char* plugin_name) {
    if (name == "float32") return KvPrecision::float32;
    if (name != "float16")
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "unknown KV precision '" + name + "' (float32 or float16)");
    if (model.uses_cpu_tree_pass() && combine_rows_vectorized()) return KvPrecision::float16;
    if (sdk::host().log_enabled(CDZ_LOG_WARN))
        sdk::host().log(CDZ_LOG_WARN, plugin_name,
                        "kv_precision = \"float16\" needs the CPU pass's " CADENZA_VECTORIZED_KERNEL
                        ", which does not run here: the cache stays float32");
    return KvPrecision::float32;
}

}  // namespace cadenza::llama
