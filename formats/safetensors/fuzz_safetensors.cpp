// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a whole safetensors file,
// opened as cadenza opens one (memory-mapped from a file), then every
// tensor read as float32 or int64 as its dtype allows. Every input opens
// or is refused with safetensors::Error; anything else, a crash or a
// sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input_file.h"
#include "safetensors.h"

namespace st = cadenza::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string path = cadenza::fuzz::write_fuzz_input_file(data, size, ".safetensors");
    try {
        const st::File file(path);
        for (const auto& tensor : file.tensors()) {
            if (tensor.byte_size() > (1u << 20)) continue;  // memory, not parsing
            try {
                (void)file.read_f32(tensor.name);
            } catch (const st::Error&) {
                (void)file.read_i64(tensor.name);
            }
        }
    } catch (const st::Error&) {
    }
    return 0;
}
