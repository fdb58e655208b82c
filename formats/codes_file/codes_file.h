// Codes files: the codec tokens `cadenza codec encode` writes and `cadenza
// codec decode` reads (docs/formats.md, "Codes file"). A safetensors file
// with one int32 tensor "codes" of shape [codebooks, frames] and the codec's
// rates as metadata; int64 codes are read too, each checked to fit int32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::codes_file {

struct Codes {
    int64_t codebooks = 0, frames = 0;
    std::vector<int32_t> values;  // [codebooks, frames], row-major
};

// What a codes file records about the codec that wrote it.
struct CodesProvenance {
    std::string pipeline;
    uint32_t sample_rate = 0;  // Hz
    double frame_rate = 0;     // frames per second
};

// Throws safetensors::Error naming the file: not safetensors, no "codes"
// tensor, a shape that is not [codebooks, frames], a value outside int32.
Codes read_codes(const std::string& path);
// Written through a temporary file renamed into place.
void write_codes(const std::string& path, const Codes& codes, const CodesProvenance& provenance);

}  // namespace cadenza::codes_file
