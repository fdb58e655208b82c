// The convolutional autoencoder of the mel-FSQ codec, as plain tensors and
// functional ATen ops (usable with autograd for training):
//   encoder: conv(n_mels -> width), encoder_blocks residual blocks, conv(width -> dims)
//   decoder: conv(dims -> width), decoder_blocks residual blocks, conv(width -> n_mels)
// A residual block is x + conv2(gelu(conv1(gelu(x)))); every convolution has
// kernel_size taps and "same" zero padding, so no frame is added or lost.
// Tensor names: {encoder,decoder}.{input,output}.{weight,bias} and
// {encoder,decoder}.blocks.N.{conv1,conv2}.{weight,bias}.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mel_codec_config.h"

namespace cadenza::mel_fsq {

class MelAutoencoder {
public:
    // PyTorch's default convolution initialization (uniform in +-1/sqrt(fan_in)),
    // drawn from a generator seeded with `seed`; the second convolution of each
    // block is scaled down so that the blocks start near the identity.
    static MelAutoencoder initialize(const MelCodecConfig& config, uint64_t seed);
    // Every expected name with its exact shape, nothing else: throws
    // std::invalid_argument naming the missing, unexpected or misshapen tensor.
    static MelAutoencoder from_tensors(const MelCodecConfig& config, std::map<std::string, at::Tensor> tensors);

    // Names and shapes the configuration requires, in a fixed order.
    static std::vector<std::pair<std::string, std::vector<int64_t>>> expected_shapes(const MelCodecConfig& config);

    // normalized log-mel [batch, n_mels, frames] -> latent [batch, dims, frames]
    at::Tensor encode(const at::Tensor& mel) const;
    // quantized latent [batch, dims, frames] -> normalized log-mel [batch, n_mels, frames]
    at::Tensor decode(const at::Tensor& latent) const;

    const MelCodecConfig& config() const { return config_; }
    const std::map<std::string, at::Tensor>& tensors() const { return tensors_; }
    std::vector<at::Tensor> parameters() const;
    void to(const at::Device& device);

private:
    at::Tensor conv(const at::Tensor& x, const std::string& name) const;
    at::Tensor stack(const at::Tensor& x, const std::string& side, int64_t blocks) const;

    MelCodecConfig config_;
    std::map<std::string, at::Tensor> tensors_;
};

}  // namespace cadenza::mel_fsq
