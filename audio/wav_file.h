#pragma once
// Mono float audio read from and written to sound files through libsndfile.
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

// Reads any format libsndfile knows; several channels are averaged to mono.
// Throws AudioFileError naming the path and libsndfile's reason.
Waveform read_waveform(const std::string& path);

// Writes 16-bit PCM WAV (samples clipped to [-1, 1]); the file appears whole
// or not at all (written to a temporary name, then renamed).
void write_waveform(const std::string& path, const Waveform& waveform);

}  // namespace cadenza::audio
