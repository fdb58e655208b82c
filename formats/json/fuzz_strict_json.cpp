// libFuzzer entry point (cmake/CadenzaFuzz.cmake): the JSON of safetensors
// headers, model configs and codec metadata. Every input parses or is
// refused with StrictJsonError; anything else, a crash or a sanitizer report
// is a bug.
#include <cstddef>
#include <cstdint>

#include "strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    try {
        const nlohmann::json value = cadenza::json_format::parse_strict_json(text, text + size, "fuzz.json");
        (void)value.dump();
    } catch (const cadenza::json_format::StrictJsonError&) {
    }
    return 0;
}
