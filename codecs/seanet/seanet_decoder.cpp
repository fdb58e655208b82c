#include "seanet_decoder.h"

#include "conv_layers.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "resnet_block.h"
#include "slstm.h"

namespace cadenza::seanet {

SeanetDecoder::SeanetDecoder(const SeanetConfig& config, const std::string& prefix, ParameterSource& source)
    : config_(config) {
    config.validate(prefix);
    if (config.bidirectional)
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, prefix + ": a bidirectional decoder LSTM is not supported");
    int index = 0;
    auto next = [&] { return prefix + ".model." + std::to_string(index++); };
    const int64_t filters = config.n_filters;
    int64_t mult = int64_t{1} << config.ratios.size();
    model_.add(std::make_unique<StreamableConv1d>(conv_spec(config, config.dimension, mult * filters, config.kernel_size),
                                                  next(), source));
    if (config.lstm > 0) model_.add(std::make_unique<SLstm>(mult * filters, config.lstm, false, next(), source));
    for (int64_t ratio : config.ratios) {
        model_.add(std::make_unique<ActivationLayer>(config.activation, mult * filters, next(), source));
        model_.add(std::make_unique<StreamableConvTranspose1d>(
            conv_spec(config, mult * filters, mult * filters / 2, ratio * 2, ratio), next(), source));
        int64_t dilation = 1;
        for (int64_t j = 0; j < config.n_residual_layers; ++j, dilation *= config.dilation_base)
            model_.add(std::make_unique<ResnetBlock>(config, mult * filters / 2, dilation, next(), source));
        mult /= 2;
    }
    model_.add(std::make_unique<ActivationLayer>(config.activation, filters, next(), source));
    model_.add(std::make_unique<StreamableConv1d>(
        conv_spec(config, filters, config.channels, config.last_kernel_size), next(), source));
    if (config.final_activation)
        model_.add(std::make_unique<ActivationLayer>(*config.final_activation, config.channels, next(), source));
}

bool SeanetDecoder::can_stream() const {
    return config_.causal && config_.norm != ConvNorm::time_group_norm && config_.pad_mode != PadMode::circular;
}

}  // namespace cadenza::seanet
