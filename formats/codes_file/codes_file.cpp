#include "codes_file.h"

#include <limits>

#include "safetensors.h"

namespace cadenza::codes_file {

Codes read_codes(const std::string& path) {
    const safetensors::File file(path);
    const auto& info = file.info("codes");
    if (info.shape.size() != 2) throw safetensors::Error(file.where("codes") + ": expected [codebooks, frames]");
    Codes codes;
    codes.codebooks = info.shape[0];
    codes.frames = info.shape[1];
    const std::vector<int64_t> values = file.read_i64("codes");
    codes.values.reserve(values.size());
    for (int64_t value : values) {
        if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
            throw safetensors::Error(file.where("codes") + ": value " + std::to_string(value) +
                                     " is not a code (was truncated to 32 bits before)");
        codes.values.push_back(static_cast<int32_t>(value));
    }
    return codes;
}

void write_codes(const std::string& path, const Codes& codes, const CodesProvenance& provenance) {
    safetensors::Writer writer;
    writer.set_metadata("cadenza.codes.pipeline", provenance.pipeline);
    writer.set_metadata("cadenza.codes.sample_rate", std::to_string(provenance.sample_rate));
    writer.set_metadata("cadenza.codes.frame_rate", std::to_string(provenance.frame_rate));
    writer.add_i32("codes", {codes.codebooks, codes.frames}, codes.values.data());
    writer.write(path);
}

}  // namespace cadenza::codes_file
