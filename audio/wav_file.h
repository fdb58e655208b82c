#pragma once
// Mono float audio read from and written to sound files through libsndfile.
#include <string>
#include <vector>

namespace cadenza::audio {

struct Waveform {
    std::vector<float> samples;  // mono, nominally in [-1, 1]
    int sample_rate = 0;

    double duration_seconds() const {
        return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0;
    }
};

// Reads any format libsndfile knows; several channels are averaged to mono.
// Throws std::runtime_error naming the path and libsndfile's reason.
Waveform read_waveform(const std::string& path);

// Writes 16-bit PCM WAV (samples clipped to [-1, 1]); the file appears whole
// or not at all (written to a temporary name, then renamed).
void write_waveform(const std::string& path, const Waveform& waveform);

}  // namespace cadenza::audio
