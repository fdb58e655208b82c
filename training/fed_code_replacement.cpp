#include "fed_code_replacement.h"

namespace cadenza::training {

at::Tensor replace_fed_codes(const at::Tensor& inputs, const Batch& batch, const FedCodeReplacement& settings,
                             uint64_t stream_seed, const ReplacementCode& replacement) {
    if (!settings.enabled()) return inputs;
    at::Tensor replaced = inputs.to(at::kCPU, at::kLong).contiguous().clone();
    const at::Tensor trained = batch.trained.slice(1, 0, batch.time()).to(at::kCPU).contiguous();
    const bool* is_trained = trained.data_ptr<bool>();
    int64_t* ids = replaced.data_ptr<int64_t>();
    const int64_t rows = replaced.size(0), time = replaced.size(1);
    SplitMix64 random(stream_seed);
    for (int64_t row = 0; row < rows; ++row)
        for (int64_t position = 1; position < time; ++position) {
            const int64_t i = row * time + position;
            const bool is_code = ids[i] >= settings.code_offset && ids[i] < settings.code_offset + settings.code_count;
            if (!is_trained[i] || !is_code) continue;
            const bool replace = random.uniform() < settings.rate;
            const int64_t code = replacement(row, position, random);
            if (replace) ids[i] = code;
        }
    return replaced.to(inputs.device());
}

}  // namespace cadenza::training
