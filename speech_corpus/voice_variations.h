#pragma once
// Speaking-rate and pitch variations, one mechanism for every voice. The
// synthesizer stretches durations by s = D * P; the result is then played
// faster by P (resampled from rate r * P to r), which scales pitch and
// formants by P and durations by 1 / P. The net duration factor is D.
#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

struct Variation {
    std::string name;            // "r0.93-p1.04": duration factor D, pitch factor P
    double duration_factor = 1;  // D: > 1 is slower speech
    double pitch_factor = 1;     // P: > 1 is higher
    double synthesizer_stretch() const { return duration_factor * pitch_factor; }
    double playback_speed() const { return pitch_factor; }
};

constexpr double min_duration_factor = 0.85, max_duration_factor = 1.2;
constexpr double min_pitch_factor = 0.9, max_pitch_factor = 1.12;

// `count` variations of one voice, drawn from the seed and the voice's name:
// a Latin hypercube over [0.85, 1.2] x [0.9, 1.12] (one draw in each of
// `count` equal slices of either range), factors rounded to 0.01.
std::vector<Variation> voice_variations(const std::string& voice, uint64_t seed, int count);

Variation make_variation(double duration_factor, double pitch_factor);

}  // namespace cadenza::speech_corpus
