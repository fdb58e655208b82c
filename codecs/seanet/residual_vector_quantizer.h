// The residual vector quantizer of EnCodec and SpeechTokenizer: n_q
// Euclidean codebooks of `bins` vectors; layer i quantizes what layers
// before it left over, by nearest neighbour in L2.
#pragma once

#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>

#include "parameter_source.h"

namespace cadenza::seanet {

struct QuantizerConfig {
    int64_t dimension = 128;
    int64_t n_q = 8;
    int64_t bins = 1024;
};

class ResidualVectorQuantizer {
public:
    // Keys "<prefix>.vq.layers.<i>._codebook.{inited, cluster_size, embed, embed_avg}";
    // only embed is used, the others are checked and dropped.
    ResidualVectorQuantizer(const QuantizerConfig& config, const std::string& prefix, ParameterSource& source);

    // [batch, dimension, frames] -> codes int64 [n_q - first, batch, frames] of
    // layers first..n_q-1 (the reference's layout and its `st`).
    at::Tensor encode(const at::Tensor& embeddings, int64_t n_q, int64_t first = 0) const;
    // codes [k, batch, frames] of layers first..first+k-1 -> the sum of their
    // vectors [batch, dimension, frames].
    at::Tensor decode(const at::Tensor& codes, int64_t first = 0) const;

    const QuantizerConfig& config() const { return config_; }
    const at::Tensor& codebook(int64_t layer) const { return codebooks_.at(static_cast<size_t>(layer)); }

private:
    at::Tensor nearest(int64_t layer, const at::Tensor& vectors) const;  // [n, dimension] -> [n]
    at::Tensor lookup(int64_t layer, const at::Tensor& codes) const;     // [batch, frames] -> [batch, dimension, frames]

    QuantizerConfig config_;
    std::vector<at::Tensor> codebooks_;        // [bins, dimension]
    std::vector<at::Tensor> squared_norms_;    // [bins]
};

}  // namespace cadenza::seanet
