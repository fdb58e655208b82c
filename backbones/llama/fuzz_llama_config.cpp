// libFuzzer entry point (cmake/CadenzaFuzz.cmake): the text of a LLaMA
// config.json, parsed strictly and read with every check the backbone makes
// before it sizes a tensor. Every input is read or refused with
// cadenza::sdk::Error; anything else, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "llama_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto config = cadenza::llama::LlamaConfig::parse(text, "config.json");
        (void)config.parameter_count();
        (void)cadenza::llama::LlamaConfig::parse(config.to_json().dump(), "config.json (written back)");
    } catch (const cadenza::sdk::Error&) {
    }
    return 0;
}
