#include "residual_vector_quantizer.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/stack.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::seanet {

ResidualVectorQuantizer::ResidualVectorQuantizer(const QuantizerConfig& config, const std::string& prefix,
                                                 ParameterSource& source)
    : config_(config) {
    if (config.dimension < 1 || config.n_q < 1 || config.bins < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, prefix + ": dimension, n_q and bins must all be at least 1");
    for (int64_t i = 0; i < config.n_q; ++i) {
        const std::string base = prefix + ".vq.layers." + std::to_string(i) + "._codebook.";
        source.take(base + "inited", {1}, ParameterRole::unused_buffer);
        source.take(base + "cluster_size", {config.bins}, ParameterRole::unused_buffer);
        const at::Tensor embed = source.take(base + "embed", {config.bins, config.dimension}, ParameterRole::codebook);
        source.take(base + "embed_avg", {config.bins, config.dimension}, ParameterRole::unused_buffer);
        codebooks_.push_back(embed);
        squared_norms_.push_back(embed.pow(2).sum(1));
    }
}

at::Tensor ResidualVectorQuantizer::nearest(int64_t layer, const at::Tensor& vectors) const {
    // The reference's arithmetic: argmax of -(|x|^2 - 2 x.e + |e|^2).
    const at::Tensor& embed = codebooks_[static_cast<size_t>(layer)];
    const at::Tensor distance = vectors.pow(2).sum(1, true) - 2 * vectors.matmul(embed.t()) +
                                squared_norms_[static_cast<size_t>(layer)].unsqueeze(0);
    return at::argmax(-distance, -1);
}

at::Tensor ResidualVectorQuantizer::lookup(int64_t layer, const at::Tensor& codes) const {
    const at::Tensor flat = at::index_select(codebooks_[static_cast<size_t>(layer)], 0, codes.reshape({-1}));
    return flat.view({codes.size(0), codes.size(1), config_.dimension}).permute({0, 2, 1});
}

at::Tensor ResidualVectorQuantizer::encode(const at::Tensor& embeddings, int64_t n_q, int64_t first) const {
    if (first < 0 || n_q > config_.n_q || first >= n_q)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "quantizer layers [" + std::to_string(first) + ", " +
                                                     std::to_string(n_q) + ") are not within [0, " +
                                                     std::to_string(config_.n_q) + ")");
    const int64_t batch = embeddings.size(0), frames = embeddings.size(2);
    at::Tensor residual = embeddings;
    std::vector<at::Tensor> codes;
    for (int64_t layer = first; layer < n_q; ++layer) {
        const at::Tensor vectors = residual.permute({0, 2, 1}).reshape({-1, config_.dimension});
        const at::Tensor indices = nearest(layer, vectors).view({batch, frames});
        residual = residual - lookup(layer, indices);
        codes.push_back(indices);
    }
    return at::stack(codes);
}

at::Tensor ResidualVectorQuantizer::decode(const at::Tensor& codes, int64_t first) const {
    if (codes.dim() != 3 || codes.size(0) < 1 || first < 0 || first + codes.size(0) > config_.n_q)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "codes of shape " + shape_text(Shape(codes.sizes().begin(), codes.sizes().end())) +
                                                     " starting at layer " + std::to_string(first) +
                                                     " do not fit a quantizer of " + std::to_string(config_.n_q) +
                                                     " layers");
    const at::Tensor indices = codes.to(at::kLong);
    const int64_t lowest = indices.min().item<int64_t>(), highest = indices.max().item<int64_t>();
    if (lowest < 0 || highest >= config_.bins)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "code " + std::to_string(lowest < 0 ? lowest : highest) +
                                                     " is outside the codebooks' [0, " + std::to_string(config_.bins) +
                                                     ")");
    at::Tensor sum = lookup(first, indices[0]);
    for (int64_t i = 1; i < indices.size(0); ++i) sum = sum + lookup(first + i, indices[i]);
    return sum;
}

}  // namespace cadenza::seanet
