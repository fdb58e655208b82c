#include "rotary_embedding.h"

#include <cmath>
#include <vector>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::llama {
namespace {

// Inverse frequencies, with Llama 3's band-wise rescaling when configured.
std::vector<double> inverse_frequencies(const LlamaConfig& config) {
    const int64_t half = config.head_dim / 2;
    std::vector<double> inverse(static_cast<size_t>(half));
    for (int64_t i = 0; i < half; ++i)
        inverse[i] = 1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / config.head_dim);
    const RopeScaling& s = config.rope_scaling;
    if (s.type == "llama3") {
        const double low_wavelength = s.original_max_position_embeddings / s.low_freq_factor;
        const double high_wavelength = s.original_max_position_embeddings / s.high_freq_factor;
        for (auto& frequency : inverse) {
            const double wavelength = 2 * M_PI / frequency;
            if (wavelength < high_wavelength) continue;
            if (wavelength > low_wavelength) {
                frequency /= s.factor;
                continue;
            }
            const double smooth = (s.original_max_position_embeddings / wavelength - s.low_freq_factor) /
                                  (s.high_freq_factor - s.low_freq_factor);
            frequency = (1 - smooth) * frequency / s.factor + smooth * frequency;
        }
    }
    return inverse;
}

}  // namespace

RotaryEmbedding::RotaryEmbedding(const LlamaConfig& config, int64_t max_positions, const at::Device& device) {
    const auto inverse = inverse_frequencies(config);
    const int64_t half = static_cast<int64_t>(inverse.size());
    std::vector<float> cos(static_cast<size_t>(max_positions * half * 2)), sin(cos.size());
    for (int64_t p = 0; p < max_positions; ++p)
        for (int64_t i = 0; i < half; ++i) {
            // Angles in double: float positions lose precision far out.
            const double angle = static_cast<double>(p) * inverse[i];
            for (int64_t copy = 0; copy < 2; ++copy) {
                cos[p * half * 2 + copy * half + i] = static_cast<float>(std::cos(angle));
                sin[p * half * 2 + copy * half + i] = static_cast<float>(std::sin(angle));
            }
        }
    cos_ = at::from_blob(cos.data(), {max_positions, half * 2}, at::kFloat).clone().to(device);
    sin_ = at::from_blob(sin.data(), {max_positions, half * 2}, at::kFloat).clone().to(device);
}

at::Tensor RotaryEmbedding::rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) const {
    const int64_t half = x.size(-1) / 2;
    const at::Tensor rotated = at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
    return x * cos + rotated * sin;
}

std::pair<at::Tensor, at::Tensor> RotaryEmbedding::angles(const at::Tensor& positions) const {
    if (positions.numel() > 0 && positions.max().item<int64_t>() >= max_positions())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "position beyond the rotary table (" + std::to_string(max_positions()) + ")");
    return {cos_.index_select(0, positions).unsqueeze(1), sin_.index_select(0, positions).unsqueeze(1)};  // [n, 1, D]
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const std::pair<at::Tensor, at::Tensor>& angles) const {
    return rotate(x, angles.first, angles.second);
}

at::Tensor RotaryEmbedding::apply(const at::Tensor& x, const at::Tensor& positions) const {
    return apply(x, angles(positions));
}

at::Tensor RotaryEmbedding::apply_sequence(const at::Tensor& x) const {
    const int64_t time = x.size(1);
    if (time > max_positions()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "sequence longer than the rotary table");
    const at::Tensor cos = cos_.narrow(0, 0, time).unsqueeze(0).unsqueeze(2);  // [1, T, 1, D]
    const at::Tensor sin = sin_.narrow(0, 0, time).unsqueeze(0).unsqueeze(2);
    return rotate(x, cos, sin);
}

}  // namespace cadenza::llama
