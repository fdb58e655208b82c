// libFuzzer entry point (cmake/CadenzaFuzz.cmake): the mel-FSQ codec's
// metadata (the JSON under "cadenza.mel_fsq.config" in its model file), read
// and validated as the codec reads it before sizing anything. Every input is
// read or refused with std::invalid_argument; anything else, a crash or a
// sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "mel_codec_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const auto config = cadenza::mel_fsq::MelCodecConfig::from_json(text, "codec.safetensors");
        (void)config.codebook_size();
        (void)config.decoder_context();
        (void)cadenza::mel_fsq::MelCodecConfig::from_json(config.to_json(), "codec.safetensors (written back)");
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
