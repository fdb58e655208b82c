// libFuzzer entry point (cmake/CadenzaFuzz.cmake): a whole safetensors file,
// opened as cadenza opens one (memory-mapped from a file), then every
// tensor read as float32 or int64 as its dtype allows. Every input opens
// or is refused with safetensors::Error; anything else, a crash or a
// sanitizer report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "safetensors.h"

namespace st = cadenza::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // In memory when the machine has a tmpfs there: a file per input is the cost.
    static const std::string path = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                    "/fuzz-safetensors-" + std::to_string(::getpid()) + ".safetensors";
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                   static_cast<std::streamsize>(size));
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
