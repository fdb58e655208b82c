// The reference's SEANetResnetBlock: shortcut(x) + block(x), where block
// is [act, conv(k, dilation), act, conv(1)] through dim / compress hidden
// channels and the shortcut is the identity (true_skip) or a 1x1 conv.
#pragma once

#include <string>

#include "layer.h"
#include "seanet_config.h"

namespace cadenza::seanet {

class ResnetBlock : public Layer {
public:
    // Keys "<prefix>.block.{1,3}.conv.*" and "<prefix>.shortcut.conv.*".
    ResnetBlock(const SeanetConfig& config, int64_t dim, int64_t dilation, const std::string& prefix,
                ParameterSource& source);
    at::Tensor forward(const at::Tensor& x) const override;
    std::unique_ptr<LayerStream> stream() const override;

private:
    Sequential block_;
    std::unique_ptr<Layer> shortcut_;
};

}  // namespace cadenza::seanet
