// SplitMix64: a small, fast, portable random generator, so that corpora,
// splits and batches are the same on every platform and standard library
// (std::uniform_int_distribution is not). No LibTorch.
#pragma once

#include <cmath>
#include <cstdint>

namespace cadenza::training {

class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}

    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n), n > 0, without modulo bias.
    uint64_t below(uint64_t n) {
        const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % n);
        uint64_t value;
        do value = next();
        while (value >= limit);
        return value % n;
    }
    // Uniform in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Exponential(1), for Dirichlet weights.
    double exponential() { return -std::log1p(-uniform()); }

private:
    uint64_t state_;
};

// A seed for the `index`-th stream derived from `seed` (batches by step).
inline uint64_t derive_seed(uint64_t seed, uint64_t index) {
    SplitMix64 mixer(seed ^ (index * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
    mixer.next();
    return mixer.next();
}

}  // namespace cadenza::training
