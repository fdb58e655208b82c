// The fuzzer's input as a file, for the readers that take a path (as cadenza
// reads every file a user hands it): one scratch file per process, rewritten
// for each input, in memory when the machine has a tmpfs at /dev/shm.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace cadenza::fuzz {

inline std::string write_fuzz_input_file(const uint8_t* data, size_t size, const std::string& extension) {
    static const std::string directory = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string path = directory + "/cadenza-fuzz-" + std::to_string(::getpid()) + extension;
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
}

}  // namespace cadenza::fuzz
