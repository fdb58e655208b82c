// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a codes file, read as
// `cadenza codec decode` reads one (safetensors, then the codes' shape and
// range), then written back and read again. Every input is read or refused
// with safetensors::Error; anything else, a crash or a sanitizer report is a
// bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "codes_file.h"
#include "fuzz_input_file.h"
#include "safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    namespace cf = cadenza::codes_file;
    const std::string path = cadenza::fuzz::write_fuzz_input_file(data, size, ".safetensors");
    try {
        const cf::Codes codes = cf::read_codes(path);
        if (codes.values.size() != static_cast<size_t>(codes.codebooks * codes.frames)) __builtin_trap();
        cf::write_codes(path, codes, {"fuzz.toml", 16000, 50.0});
        if (cf::read_codes(path).values != codes.values) __builtin_trap();
    } catch (const cadenza::safetensors::Error&) {
    }
    return 0;
}
