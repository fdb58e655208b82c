// SEANetDecoder: embeddings [batch, dimension, frames] to audio
// [batch, channels, frames * hop_length]. A causal decoder also decodes
// chunk by chunk with the same result (stream()).
#pragma once

#include <memory>
#include <string>

#include "layer.h"
#include "seanet_config.h"

namespace cadenza::seanet {

class SeanetDecoder {
public:
    // Keys "<prefix>.model.<i>...." as the reference's nn.Sequential numbers them.
    SeanetDecoder(const SeanetConfig& config, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& embeddings) const { return model_.forward(embeddings); }
    const SeanetConfig& config() const { return config_; }

    // Causal, without GroupNorm or circular padding: then every layer can
    // run chunk by chunk.
    bool can_stream() const;
    // Throws cadenza::sdk::Error (unsupported) when !can_stream().
    std::unique_ptr<LayerStream> stream() const { return model_.stream(); }

private:
    SeanetConfig config_;
    Sequential model_;
};

}  // namespace cadenza::seanet
