// The engine's calls into a codec plugin's decoder, their outputs checked:
// a codec whose model gives NaN is a configuration error, not audio.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cadenza/status.h"
#include "managed_tensor.h"
#include "plugin_instance.h"

namespace cadenza {

// Audio given or decoded must be numbers: NaN weights in a codec gave
// all-NaN audio with status OK (and -32768 in a WAV), NaN in a voice prompt
// went on into the codec. `what` names the audio; `status` says whose fault.
void check_finite_audio(const float* samples, size_t count, cdz_status_code status, const std::string& what);

// The codec's audio for codes [codebooks, frames], whole, checked.
std::vector<float> decode_whole(const PluginInstance& codec, const int32_t* codes, int64_t codebooks, int64_t frames);

// The audio that `frames` more codes of one codebook make final in a codec
// stream, checked (maybe empty).
ManagedTensor decode_stream_piece(const PluginInstance& codec, void* stream, const int32_t* codes, int64_t frames,
                                  bool last);

}  // namespace cadenza
