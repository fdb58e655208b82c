#include "seanet_config.h"

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "json_fields.h"

namespace cadenza::seanet {

int64_t SeanetConfig::hop_length() const {
    int64_t hop = 1;
    for (int64_t ratio : ratios) hop *= ratio;
    return hop;
}

void SeanetConfig::validate(const std::string& where) const {
    auto require = [&](bool ok, const std::string& message) {
        if (!ok) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": " + message);
    };
    require(channels >= 1, "channels must be at least 1");
    require(dimension >= 1, "dimension must be at least 1");
    require(n_filters >= 1, "n_filters must be at least 1");
    require(n_residual_layers >= 0, "n_residual_layers must not be negative");
    require(!ratios.empty(), "ratios must not be empty");
    for (int64_t ratio : ratios) require(ratio >= 1, "every ratio must be at least 1");
    require(kernel_size >= 1 && last_kernel_size >= 1 && residual_kernel_size >= 1, "kernel sizes must be at least 1");
    require(dilation_base >= 1, "dilation_base must be at least 1");
    require(compress >= 1 && n_filters / compress >= 1, "compress must be at least 1 and leave n_filters / compress >= 1");
    require(lstm >= 0, "lstm (the number of LSTM layers) must not be negative");
    require(!(norm == ConvNorm::time_group_norm && causal),
            "norm time_group_norm is not causal (the reference raises \"GroupNorm doesn't support causal evaluation\")");
    require(trim_right_ratio >= 0.0 && trim_right_ratio <= 1.0, "trim_right_ratio must be in [0, 1]");
    require(causal || trim_right_ratio == 1.0, "trim_right_ratio != 1 only makes sense for causal convolutions");
}

ConvNorm parse_conv_norm(const std::string& name, const std::string& where) {
    if (name == "none" || name == "time_layer_norm") return ConvNorm::none;
    if (name == "weight_norm") return ConvNorm::weight_norm;
    if (name == "spectral_norm") return ConvNorm::spectral_norm;
    if (name == "time_group_norm") return ConvNorm::time_group_norm;
    if (name == "layer_norm")
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED,
                    where + ": norm 'layer_norm' is unsupported: the reference's ConvLayerNorm.forward returns None, "
                            "so no working model uses it");
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": unknown norm '" + name +
                                               "' (none, weight_norm, spectral_norm, time_group_norm, time_layer_norm)");
}

std::string conv_norm_name(ConvNorm norm) {
    switch (norm) {
    case ConvNorm::none: return "none";
    case ConvNorm::weight_norm: return "weight_norm";
    case ConvNorm::spectral_norm: return "spectral_norm";
    case ConvNorm::time_group_norm: return "time_group_norm";
    }
    return "?";
}

PadMode parse_pad_mode(const std::string& name, const std::string& where) {
    if (name == "reflect") return PadMode::reflect;
    if (name == "constant") return PadMode::constant;
    if (name == "replicate") return PadMode::replicate;
    if (name == "circular") return PadMode::circular;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                where + ": unknown pad_mode '" + name + "' (reflect, constant, replicate, circular)");
}

void apply_seanet_arguments(SeanetConfig& config, const nlohmann::json& args, bool decoder, const std::string& where) {
    if (!args.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + " must be an object");
    std::string activation = config.activation.name();
    nlohmann::json activation_params;  // null: the reference default {"alpha": 1.0}
    bool activation_given = false;
    std::optional<std::string> final_activation;
    nlohmann::json final_activation_params;
    for (const auto& [key, value] : args.items()) {
        const std::string at = where + "." + key;
        if (key == "channels") config.channels = json_int(value, at);
        else if (key == "dimension") config.dimension = json_int(value, at);
        else if (key == "n_filters") config.n_filters = json_int(value, at);
        else if (key == "n_residual_layers") config.n_residual_layers = json_int(value, at);
        else if (key == "ratios") config.ratios = json_int_list(value, at);
        else if (key == "activation") {
            activation = json_string(value, at);
            activation_given = true;
        } else if (key == "activation_params") {
            activation_params = value;
            activation_given = true;
        }
        else if (key == "norm") config.norm = parse_conv_norm(json_string(value, at), at);
        else if (key == "norm_params") {
            if (!value.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, at + " must be an object");
            for (const auto& [name, parameter] : value.items()) {
                if (name == "eps") config.group_norm_eps = json_number(parameter, at + ".eps");
                else if (name == "affine") config.group_norm_affine = json_bool(parameter, at + ".affine");
                else throw sdk::Error(CDZ_STATUS_UNSUPPORTED, at + ": unsupported norm parameter '" + name + "'");
            }
        } else if (key == "kernel_size") config.kernel_size = json_int(value, at);
        else if (key == "last_kernel_size") config.last_kernel_size = json_int(value, at);
        else if (key == "residual_kernel_size") config.residual_kernel_size = json_int(value, at);
        else if (key == "dilation_base") config.dilation_base = json_int(value, at);
        else if (key == "causal") config.causal = json_bool(value, at);
        else if (key == "pad_mode") config.pad_mode = parse_pad_mode(json_string(value, at), at);
        else if (key == "true_skip") config.true_skip = json_bool(value, at);
        else if (key == "compress") config.compress = json_int(value, at);
        else if (key == "lstm") config.lstm = json_int(value, at);
        else if (key == "bidirectional") config.bidirectional = json_bool(value, at);
        else if (decoder && key == "trim_right_ratio") config.trim_right_ratio = json_number(value, at);
        else if (decoder && key == "final_activation") {
            if (!value.is_null()) final_activation = json_string(value, at);
        } else if (decoder && key == "final_activation_params") final_activation_params = value;
        else throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": unknown argument '" + key + "'");
    }
    if (activation_given) config.activation = ActivationSpec::parse(activation, activation_params, where + ".activation");
    if (final_activation) {
        if (*final_activation == "Snake")
            throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ".final_activation: Snake is not a torch.nn activation");
        config.final_activation =
            ActivationSpec::parse(*final_activation, final_activation_params, where + ".final_activation");
    }
    if (decoder && config.bidirectional)
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": a bidirectional decoder LSTM is not supported "
                                                    "(the reference always builds the decoder unidirectional)");
}

}  // namespace cadenza::seanet
