#include "text_dropout.h"

#include "random_bits.h"

namespace cadenza::training {

at::Tensor drop_text(const at::Tensor& inputs, const Batch& batch, const TextDropout& dropout) {
    if (!dropout.enabled()) return inputs;
    at::Tensor dropped = inputs.to(at::kCPU, at::kLong).contiguous().clone();
    const at::Tensor real = batch.real.slice(1, 0, batch.time()).to(at::kCPU).contiguous();
    const bool* is_real = real.data_ptr<bool>();
    int64_t* ids = dropped.data_ptr<int64_t>();
    const int64_t rows = dropped.size(0), time = dropped.size(1);
    const auto is_text = [&](int64_t i) {
        return is_real[i] && ids[i] >= dropout.text_offset && ids[i] < dropout.text_offset + dropout.text_count;
    };
    SplitMix64 random(derive_seed(dropout.seed, batch.fingerprint()));
    for (int64_t r = 0; r < rows; ++r) {
        int64_t t = 0;
        while (t < time) {
            const int64_t begin = r * time + t;
            if (!is_text(begin)) {
                ++t;
                continue;
            }
            int64_t end = begin;
            while (end < (r + 1) * time && is_text(end)) ++end;
            if (random.uniform() < dropout.rate)
                for (int64_t i = begin + 1; i < end - 1; ++i) ids[i] = dropout.null_symbol();
            t += end - begin;
        }
    }
    return dropped.to(inputs.device());
}

}  // namespace cadenza::training
