// The reference's SConv1d and SConvTranspose1d: a convolution with its
// normalisation (weight_norm / spectral_norm folded into one weight at load
// time, or a GroupNorm after it) and the padding rules of padding.h.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

#include "layer.h"
#include "seanet_config.h"

namespace cadenza::seanet {

struct ConvSpec {
    int64_t in_channels = 1;
    int64_t out_channels = 1;
    int64_t kernel_size = 1;
    int64_t stride = 1;
    int64_t dilation = 1;
    bool causal = false;
    PadMode pad_mode = PadMode::reflect;
    ConvNorm norm = ConvNorm::none;
    double group_norm_eps = 1e-5;
    bool group_norm_affine = true;
    double trim_right_ratio = 1.0;  // transposed only
};

// A convolution of a SEANet built from `config`: its causality, padding and norm.
ConvSpec conv_spec(const SeanetConfig& config, int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                   int64_t stride = 1, int64_t dilation = 1);

// The weight, bias and GroupNorm affine of one convolution, read from
// "<prefix>.conv.*" and "<prefix>.norm.*" (conv_name "conv" or "convtr").
struct NormalizedConvWeights {
    at::Tensor weight;      // effective weight: [out, in, k], or [in, out, k] when transposed
    at::Tensor bias;        // [out]
    at::Tensor norm_scale;  // GroupNorm weight [out], time_group_norm with affine only
    at::Tensor norm_shift;

    static NormalizedConvWeights load(const ConvSpec& spec, bool transposed, const std::string& prefix,
                                      ParameterSource& source);
    // GroupNorm with one group when the spec asks for it; x otherwise.
    at::Tensor normalize(const ConvSpec& spec, const at::Tensor& x) const;
};

// SConv1d at "<prefix>": keys <prefix>.conv.conv.* and <prefix>.conv.norm.*.
class StreamableConv1d : public Layer {
public:
    StreamableConv1d(const ConvSpec& spec, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& x) const override;
    // Causal, stride 1, no GroupNorm, no circular padding only.
    std::unique_ptr<LayerStream> stream() const override;

    const ConvSpec& spec() const { return spec_; }
    const NormalizedConvWeights& weights() const { return weights_; }
    at::Tensor convolve(const at::Tensor& padded) const;  // the convolution and its norm, no padding

private:
    ConvSpec spec_;
    NormalizedConvWeights weights_;
};

// SConvTranspose1d at "<prefix>": keys <prefix>.convtr.convtr.* and <prefix>.convtr.norm.*.
class StreamableConvTranspose1d : public Layer {
public:
    StreamableConvTranspose1d(const ConvSpec& spec, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& x) const override;
    // Causal, no GroupNorm only.
    std::unique_ptr<LayerStream> stream() const override;

    const ConvSpec& spec() const { return spec_; }
    const NormalizedConvWeights& weights() const { return weights_; }
    int64_t trim_left() const;   // samples cut at the start of the full transposed output
    int64_t trim_right() const;  // and at its end

private:
    ConvSpec spec_;
    NormalizedConvWeights weights_;
};

}  // namespace cadenza::seanet
