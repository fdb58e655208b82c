// The constructor arguments of the reference SEANetEncoder / SEANetDecoder
// (facebookresearch/encodec, and SpeechTokenizer's copy that adds
// `bidirectional`), with the reference defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "activation.h"

namespace cadenza::seanet {

// What follows each convolution, as the reference's `norm` argument.
enum class ConvNorm {
    none,             // "none", and "time_layer_norm" (the reference maps it to an identity)
    weight_norm,      // weight_g * weight_v / ||weight_v||
    spectral_norm,    // weight_orig / sigma, sigma from the stored power-iteration vectors
    time_group_norm,  // GroupNorm(1 group, out channels) over (channels, time)
};

enum class PadMode { reflect, constant, replicate, circular };

struct SeanetConfig {
    int64_t channels = 1;
    int64_t dimension = 128;
    int64_t n_filters = 32;
    int64_t n_residual_layers = 1;
    std::vector<int64_t> ratios{8, 5, 4, 2};  // upsampling order; the encoder uses them reversed
    ActivationSpec activation{};
    ConvNorm norm = ConvNorm::weight_norm;
    double group_norm_eps = 1e-5;  // norm_params["eps"] for time_group_norm
    bool group_norm_affine = true; // norm_params["affine"] for time_group_norm
    int64_t kernel_size = 7;
    int64_t last_kernel_size = 7;
    int64_t residual_kernel_size = 3;
    int64_t dilation_base = 2;
    bool causal = false;
    PadMode pad_mode = PadMode::reflect;
    bool true_skip = false;
    int64_t compress = 2;
    int64_t lstm = 2;                        // LSTM layers after the convolutions; 0: none
    bool bidirectional = false;              // SpeechTokenizer's encoder LSTM
    double trim_right_ratio = 1.0;           // decoder only
    std::optional<ActivationSpec> final_activation;  // decoder only

    int64_t hop_length() const;  // product of the ratios
    // Throws cadenza::sdk::Error naming `where` for values the reference would
    // reject or that cannot build a model.
    void validate(const std::string& where) const;
};

ConvNorm parse_conv_norm(const std::string& name, const std::string& where);
std::string conv_norm_name(ConvNorm norm);
PadMode parse_pad_mode(const std::string& name, const std::string& where);

// Overrides `config` with the keys of `args`, an object of the reference
// constructor's keyword arguments ("n_filters", "ratios", "norm",
// "norm_params", ...). `decoder` allows the decoder-only arguments. Unknown
// keys and wrong types are errors naming `where` and the key.
void apply_seanet_arguments(SeanetConfig& config, const nlohmann::json& args, bool decoder, const std::string& where);

}  // namespace cadenza::seanet
