#pragma once
// Mono float audio read from and written to sound files through libsndfile.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cadenza::audio {

// A sound file that cannot be read or written: the user's file, not a bug.
struct AudioFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Waveform {
    std::vector<float> samples;  // mono, nominally in [-1, 1]
    int sample_rate = 0;

    double duration_seconds() const {
        return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0;
    }
};

// What read_waveform accepts: at most an hour, 2^28 samples in all (1 GiB
// of float32 before mixing to mono) and 256 channels.
inline constexpr double max_audio_seconds = 3600;
inline constexpr int64_t max_audio_samples = int64_t{1} << 28;
inline constexpr int max_audio_channels = 256;

// Reads a regular file in any format libsndfile knows; several channels are
// averaged to mono. Throws AudioFileError naming the path and the reason (a
// missing or non-regular file, libsndfile's reason, a limit above, fewer
// frames than the header declares).
Waveform read_waveform(const std::string& path);

// Writes 16-bit PCM WAV (samples clipped to [-1, 1]); the file appears whole
// or not at all (written to a temporary name, then renamed).
void write_waveform(const std::string& path, const Waveform& waveform);

}  // namespace cadenza::audio
