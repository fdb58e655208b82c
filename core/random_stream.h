// The seeded random stream behind cdz_rng: xoshiro256** seeded through
// splitmix64, so one seed gives the same numbers on every platform.
#pragma once

#include <cstdint>

struct cdz_rng {
    uint64_t state[4];
};

namespace cadenza {

void random_stream_seed(cdz_rng& rng, uint64_t seed);
uint64_t random_stream_next(cdz_rng& rng);
// Uniform in [0, 1) with 53 random bits.
double random_stream_uniform(cdz_rng& rng);
// A seed for one stage derived from the pipeline seed and the stage name, so
// that stages draw independent streams.
uint64_t derive_stream_seed(uint64_t seed, const char* stage);

}  // namespace cadenza
