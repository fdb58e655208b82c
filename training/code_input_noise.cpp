#include "code_input_noise.h"

#include "random_bits.h"

namespace cadenza::training {

namespace {

uint64_t hash_tokens(const at::Tensor& tokens) {
    const at::Tensor contiguous = tokens.to(at::kLong).contiguous();
    const int64_t* data = contiguous.data_ptr<int64_t>();
    uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a over the 64-bit values
    for (int64_t i = 0; i < contiguous.numel(); ++i) {
        hash ^= static_cast<uint64_t>(data[i]);
        hash *= 0x100000001b3ull;
    }
    return hash;
}

}  // namespace

at::Tensor noisy_inputs(const Batch& batch, const CodeInputNoise& noise) {
    const at::Tensor inputs = batch.inputs();
    if (!noise.enabled()) return inputs;
    at::Tensor noisy = inputs.to(at::kCPU, at::kLong).contiguous().clone();
    const at::Tensor trained = batch.trained.slice(1, 0, batch.time()).to(at::kCPU).contiguous();
    const bool* is_trained = trained.data_ptr<bool>();
    int64_t* ids = noisy.data_ptr<int64_t>();
    SplitMix64 random(derive_seed(noise.seed, hash_tokens(batch.tokens.to(at::kCPU))));
    for (int64_t i = 0; i < noisy.numel(); ++i) {
        const bool is_code = ids[i] >= noise.code_offset && ids[i] < noise.code_offset + noise.code_count;
        if (!is_trained[i] || !is_code) continue;
        // One draw per fed target code whatever the outcome, so that the
        // pattern depends only on the positions.
        const bool replace = random.uniform() < noise.rate;
        const int64_t code = noise.code_offset + static_cast<int64_t>(random.below(static_cast<uint64_t>(noise.code_count)));
        if (replace) ids[i] = code;
    }
    return noisy.to(inputs.device());
}

}  // namespace cadenza::training
