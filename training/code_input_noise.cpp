#include "code_input_noise.h"

namespace cadenza::training {

at::Tensor noisy_inputs(const Batch& batch, const CodeInputNoise& noise) {
    const uint64_t stream = derive_seed(noise.seed, batch.fingerprint());
    return replace_fed_codes(batch.inputs(), batch, noise, stream, [&](int64_t, int64_t, SplitMix64& random) {
        return noise.code_offset + static_cast<int64_t>(random.below(static_cast<uint64_t>(noise.code_count)));
    });
}

}  // namespace cadenza::training
