#include "seanet_encoder.h"

#include <algorithm>

#include "conv_layers.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "resnet_block.h"
#include "slstm.h"

namespace cadenza::seanet {

SeanetEncoder::SeanetEncoder(const SeanetConfig& config, const std::string& prefix, ParameterSource& source)
    : config_(config) {
    config.validate(prefix);
    if (config.bidirectional && config.lstm == 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, prefix + ": bidirectional needs an LSTM (lstm > 0): the reference "
                                                        "doubles the last convolution's input channels either way");
    int index = 0;
    auto next = [&] { return prefix + ".model." + std::to_string(index++); };
    auto activation = [&](int64_t channels) {
        model_.add(std::make_unique<ActivationLayer>(config.activation, channels, next(), source));
    };
    const int64_t filters = config.n_filters;
    int64_t mult = 1;
    model_.add(std::make_unique<StreamableConv1d>(conv_spec(config, config.channels, filters, config.kernel_size),
                                                  next(), source));
    std::vector<int64_t> ratios = config.ratios;
    std::reverse(ratios.begin(), ratios.end());  // downsampling runs the ratios backwards
    for (int64_t ratio : ratios) {
        int64_t dilation = 1;
        for (int64_t j = 0; j < config.n_residual_layers; ++j, dilation *= config.dilation_base)
            model_.add(std::make_unique<ResnetBlock>(config, mult * filters, dilation, next(), source));
        activation(mult * filters);
        model_.add(std::make_unique<StreamableConv1d>(
            conv_spec(config, mult * filters, mult * filters * 2, ratio * 2, ratio), next(), source));
        mult *= 2;
    }
    if (config.lstm > 0)
        model_.add(std::make_unique<SLstm>(mult * filters, config.lstm, config.bidirectional, next(), source));
    if (config.bidirectional) mult *= 2;
    activation(mult * filters);
    model_.add(std::make_unique<StreamableConv1d>(
        conv_spec(config, mult * filters, config.dimension, config.last_kernel_size), next(), source));
}

}  // namespace cadenza::seanet
