#include "finite_scalar_quantizer.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace cadenza::mel_fsq {

FiniteScalarQuantizer::FiniteScalarQuantizer(std::vector<int64_t> levels) : levels_(std::move(levels)) {
    if (levels_.empty()) throw std::invalid_argument("FSQ needs at least one level");
    constexpr double epsilon = 1e-3;
    for (int64_t level : levels_) {
        if (level < 2) throw std::invalid_argument("every FSQ level must be at least 2");
        const double half = (static_cast<double>(level) - 1.0) * (1.0 - epsilon) / 2.0;
        // Even levels are asymmetric: digits -L/2 .. L/2 - 1.
        const double offset = level % 2 == 0 ? 0.5 : 0.0;
        half_levels_.push_back(half);
        offsets_.push_back(offset);
        shifts_.push_back(std::atanh(offset / half));
        half_widths_.push_back(static_cast<double>(level / 2));
        basis_.push_back(codebook_size_);
        codebook_size_ *= level;
    }
}

at::Tensor FiniteScalarQuantizer::per_channel(const std::vector<double>& values, const at::Tensor& like) const {
    return at::tensor(values, like.options().dtype(at::kDouble)).to(like.scalar_type()).view({1, dims(), 1});
}

at::Tensor FiniteScalarQuantizer::bound(const at::Tensor& latent) const {
    if (latent.dim() != 3 || latent.size(1) != dims())
        throw std::invalid_argument("FSQ latent must be [batch, " + std::to_string(dims()) + ", frames]");
    const at::Tensor half = per_channel(half_levels_, latent);
    const at::Tensor offset = per_channel(offsets_, latent);
    const at::Tensor shift = per_channel(shifts_, latent);
    return at::tanh(latent + shift) * half - offset;
}

at::Tensor FiniteScalarQuantizer::quantize(const at::Tensor& latent) const {
    const at::Tensor bounded = bound(latent);
    const at::Tensor rounded = bounded + (at::round(bounded) - bounded).detach();
    return rounded / per_channel(half_widths_, latent);
}

at::Tensor FiniteScalarQuantizer::codes(const at::Tensor& latent) const {
    const at::Tensor digits = at::round(bound(latent)).to(at::kLong) +
                              at::tensor(half_widths_, latent.options().dtype(at::kDouble)).to(at::kLong).view({1, dims(), 1});
    const at::Tensor basis = at::tensor(basis_, latent.options().dtype(at::kLong)).view({1, dims(), 1});
    return (digits * basis).sum(1);
}

at::Tensor FiniteScalarQuantizer::values(const at::Tensor& codes) const {
    if (codes.dim() != 2) throw std::invalid_argument("FSQ codes must be [batch, frames]");
    const at::Tensor c = codes.to(at::kLong);
    if (c.numel() > 0 && (c.min().item<int64_t>() < 0 || c.max().item<int64_t>() >= codebook_size_))
        throw std::invalid_argument("FSQ code out of range [0, " + std::to_string(codebook_size_) + ")");
    const auto options = c.options();
    const at::Tensor basis = at::tensor(basis_, options).view({1, dims(), 1});
    const at::Tensor levels = at::tensor(levels_, options).view({1, dims(), 1});
    const at::Tensor digits = at::remainder(at::floor_divide(c.unsqueeze(1), basis), levels);
    const at::Tensor half = at::tensor(half_widths_, options.dtype(at::kDouble)).view({1, dims(), 1});
    return ((digits.to(at::kDouble) - half) / half).to(at::kFloat);
}

}  // namespace cadenza::mel_fsq
