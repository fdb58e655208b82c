#include "voice_variations.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace cadenza::speech_corpus {
namespace {

struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

double round_hundredth(double value) { return std::round(value * 100.0) / 100.0; }

bool variation_named(const std::vector<Variation>& variations, const std::string& name) {
    for (const auto& v : variations)
        if (v.name == name) return true;
    return false;
}

}  // namespace

Variation make_variation(double duration_factor, double pitch_factor) {
    Variation variation;
    variation.duration_factor = round_hundredth(duration_factor);
    variation.pitch_factor = round_hundredth(pitch_factor);
    char name[32];
    std::snprintf(name, sizeof(name), "r%.2f-p%.2f", variation.duration_factor, variation.pitch_factor);
    variation.name = name;
    return variation;
}

std::vector<Variation> voice_variations(const std::string& voice, uint64_t seed, int count) {
    if (count < 1) throw std::invalid_argument("a voice needs at least one variation");
    uint64_t state = seed;
    for (const unsigned char c : voice) state = (state ^ c) * 0x100000001b3ULL;
    SplitMix64 random{state};
    // A random pairing of the pitch slices with the rate slices.
    std::vector<int> pitch_slice(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) pitch_slice[static_cast<size_t>(i)] = i;
    for (int i = count - 1; i > 0; --i)
        std::swap(pitch_slice[static_cast<size_t>(i)], pitch_slice[random.next() % static_cast<uint64_t>(i + 1)]);
    std::vector<Variation> variations;
    for (int i = 0; i < count; ++i) {
        const double rate_width = (max_duration_factor - min_duration_factor) / count;
        const double pitch_width = (max_pitch_factor - min_pitch_factor) / count;
        const double duration = min_duration_factor + (i + random.uniform()) * rate_width;
        const double pitch = min_pitch_factor + (pitch_slice[static_cast<size_t>(i)] + random.uniform()) * pitch_width;
        Variation variation = make_variation(duration, pitch);
        // Rounding can make two draws equal; names must tell variations apart.
        for (double step = 0.01; variation_named(variations, variation.name); step += 0.01)
            variation = make_variation(duration + (duration + step <= max_duration_factor ? step : -step), pitch);
        variations.push_back(variation);
    }
    return variations;
}

}  // namespace cadenza::speech_corpus
