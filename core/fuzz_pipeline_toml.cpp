// libFuzzer entry point (cmake/CadenzaFuzz.cmake): pipeline TOML through the
// whole of validation (size and depth limits, toml++, every table and key,
// the plugin search). Every input validates or is refused with
// cadenza::Error (ValidationError with positions); anything else, a crash or
// a sanitizer report is a bug. Plugins come from the fuzzer's own directory:
// in a fuzz build there are none, so stages are checked up to the plugin
// lookup.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "error.h"
#include "pipeline_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)cadenza::load_pipeline_config_string(text, "fuzz.toml", std::filesystem::temp_directory_path());
    } catch (const cadenza::Error&) {
    }
    return 0;
}
