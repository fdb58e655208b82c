// SEANetEncoder: audio [batch, channels, samples] to embeddings
// [batch, dimension, frames], one frame per hop_length samples (rounded up).
#pragma once

#include <string>

#include "layer.h"
#include "seanet_config.h"

namespace cadenza::seanet {

class SeanetEncoder {
public:
    // Keys "<prefix>.model.<i>...." as the reference's nn.Sequential numbers them.
    SeanetEncoder(const SeanetConfig& config, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& audio) const { return model_.forward(audio); }
    const SeanetConfig& config() const { return config_; }

private:
    SeanetConfig config_;
    Sequential model_;
};

}  // namespace cadenza::seanet
