#include "self_feeding.h"

#include <ATen/CPUGeneratorImpl.h>

namespace cadenza::training {

at::Tensor self_fed_inputs(const at::Tensor& inputs, const at::Tensor& logits, const Batch& batch,
                           const SelfFeeding& feeding) {
    if (!feeding.enabled()) return inputs;
    const uint64_t seed = derive_seed(feeding.seed, batch.fingerprint());
    at::Tensor samples;
    {
        at::NoGradGuard no_grad;
        // Gumbel-max over the codes' logits: a sample at temperature 1.
        const at::Tensor codes = logits.detach().slice(2, feeding.code_offset, feeding.code_offset + feeding.code_count)
                                     .to(at::kCPU, at::kFloat);
        at::Generator generator = at::detail::createCPUGenerator(seed);
        const at::Tensor uniform = at::empty(codes.sizes(), codes.options()).uniform_(1e-10, 1.0, generator);
        samples = (codes - at::log(-at::log(uniform))).argmax(2).add_(feeding.code_offset).contiguous();
    }
    const int64_t* sampled = samples.data_ptr<int64_t>();
    const int64_t time = samples.size(1);
    return replace_fed_codes(inputs, batch, feeding, derive_seed(seed, 1), [&](int64_t row, int64_t position, SplitMix64&) {
        return sampled[row * time + position - 1];
    });
}

}  // namespace cadenza::training
