#include "random_stream.h"

namespace cadenza {
namespace {

uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

void random_stream_seed(cdz_rng& rng, uint64_t seed) {
    for (auto& word : rng.state) word = splitmix64(seed);
}

uint64_t random_stream_next(cdz_rng& rng) {
    uint64_t* s = rng.state;
    const uint64_t result = rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double random_stream_uniform(cdz_rng& rng) {
    return static_cast<double>(random_stream_next(rng) >> 11) * 0x1.0p-53;
}

uint64_t derive_stream_seed(uint64_t seed, const char* stage) {
    // FNV-1a over the stage name, mixed with the seed.
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char* c = stage; c && *c; ++c) {
        hash ^= static_cast<unsigned char>(*c);
        hash *= 0x100000001b3ULL;
    }
    uint64_t mixed = seed ^ hash;
    return splitmix64(mixed);
}

}  // namespace cadenza
