#include "sampling_distribution.h"

#include <cmath>
#include <cstdio>

#include "error.h"

namespace cadenza::training {

void check_sampling_settings(const SamplingSettings& settings) {
    if (!(std::isfinite(settings.temperature) && settings.temperature > 0))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the sampling temperature must be above 0");
    if (!(settings.top_p > 0 && settings.top_p <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the sampling top-p must be in (0, 1]");
}

at::Tensor sampling_distribution(const at::Tensor& logits, const SamplingSettings& settings) {
    check_sampling_settings(settings);
    at::Tensor p = at::softmax(settings.temperature == 1.0 ? logits : logits / settings.temperature, -1);
    if (settings.top_p >= 1) return p;
    const auto [sorted, order] = p.sort(-1, /*descending=*/true);
    // A token is kept while the mass before it is below top_p.
    const at::Tensor mass_before = sorted.cumsum(-1) - sorted;
    const at::Tensor kept_sorted = sorted * (mass_before < settings.top_p);
    at::Tensor kept = at::zeros_like(p).scatter_(-1, order, kept_sorted);
    return kept / kept.sum(-1, /*keepdim=*/true);
}

std::string describe(const SamplingSettings& settings) {
    char text[64];
    std::snprintf(text, sizeof(text), "temperature %g, top-p %g", settings.temperature, settings.top_p);
    return text;
}

}  // namespace cadenza::training
