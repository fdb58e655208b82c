#include "text_dropout.h"

#include "null_text.h"
#include "random_bits.h"

namespace cadenza::training {

at::Tensor drop_text(const at::Tensor& inputs, const Batch& batch, const TextDropout& dropout) {
    if (!dropout.enabled()) return inputs;
    at::Tensor dropped = inputs.to(at::kCPU, at::kLong).contiguous().clone();
    const at::Tensor real = batch.real.slice(1, 0, batch.time()).to(at::kCPU).contiguous();
    const bool* is_real = real.data_ptr<bool>();
    int64_t* ids = dropped.data_ptr<int64_t>();
    const int64_t rows = dropped.size(0), time = dropped.size(1);
    SplitMix64 random(derive_seed(dropout.seed, batch.fingerprint()));
    for (int64_t r = 0; r < rows; ++r) {
        int64_t* row = ids + r * time;
        const bool* real_row = is_real + r * time;
        const auto is_text = [&](size_t t) {
            return real_row[t] && row[t] >= dropout.text_offset && row[t] < dropout.text_offset + dropout.text_count;
        };
        for_each_text_run(static_cast<size_t>(time), is_text, [&](size_t begin, size_t end) {
            if (random.uniform() < dropout.rate) null_text_run(row, begin, end, dropout.null_symbol());
        });
    }
    return dropped.to(inputs.device());
}

}  // namespace cadenza::training
