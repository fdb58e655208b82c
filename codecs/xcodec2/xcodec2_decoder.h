// X-codec2's decoding path: FSQ index -> generator.quantizer's code and
// project_out -> fc_post_a -> the Vocos backbone (embed conv, two ResNet
// blocks, transformer blocks, two ResNet blocks, LayerNorm) -> the ISTFT
// head. Built from a config and a parameter source; the state-dict layout
// is in docs/codecs.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "parameter_source.h"
#include "xcodec2_fsq.h"
#include "xcodec2_istft.h"

namespace cadenza::xcodec2 {

struct XCodec2Config {
    int64_t sample_rate = 16000;
    int64_t hidden_dim = 1024;    // CodecDecoderVocos hidden_dim
    int64_t depth = 12;           // transformer blocks
    int64_t heads = 16;
    int64_t pos_emb_dim = 64;     // RotaryPositionalEmbeddings(dim): must equal hidden_dim / heads
    double rope_base = 10000.0;   // torchtune's default
    int64_t hop_length = 320;     // n_fft = 4 * hop
    int64_t vq_dim = 2048;        // ResidualFSQ dim (fc_prior's output, fc_post_a's input)
    std::vector<int64_t> levels = {4, 4, 4, 4, 4, 4, 4, 4};
    int64_t resnet_blocks = 2;    // prior_net and post_net each
    int64_t group_norm_groups = 32;

    // The released model (HKUSTAudio/xcodec2; the reference's inference.py).
    static XCodec2Config official() { return {}; }
    int64_t n_fft() const { return 4 * hop_length; }
    int64_t head_dim() const { return hidden_dim / heads; }
    double frame_rate() const { return static_cast<double>(sample_rate) / static_cast<double>(hop_length); }
    // Throws cadenza::sdk::Error naming the field that does not fit.
    void validate() const;
};

// GroupNorm(32, eps 1e-6) -> SiLU -> conv3 -> GroupNorm -> SiLU -> conv3, plus the input.
struct ResnetBlock {
    at::Tensor norm1_w, norm1_b, conv1_w, conv1_b, norm2_w, norm2_b, conv2_w, conv2_b;
    int64_t groups = 32;
    at::Tensor forward(const at::Tensor& x) const;  // [batch, channels, frames]
};

// RMSNorm -> attention (rotary embedding by head index, see below) -> residual;
// RMSNorm -> fc1 -> SiLU -> fc2 -> residual. No biases.
struct TransformerBlock {
    at::Tensor att_norm_w, ffn_norm_w, c_attn_w, c_proj_w, fc1_w, fc2_w;
    at::Tensor forward(const at::Tensor& x, const at::Tensor& rope_cos, const at::Tensor& rope_sin, int64_t heads) const;
};

// torchtune's RotaryPositionalEmbeddings as the reference calls it on
// q [batch, heads, time, head_dim]: torchtune takes dimension 1 as the
// position, so the angle of pair i (elements 2i, 2i + 1) of head h is
// h * base^(-2i / head_dim), the same for every time step.
// cos / sin: [heads, 1, head_dim / 2].
at::Tensor rotate_by_head(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

class XCodec2Decoder {
public:
    // Takes generator.quantizer.*, generator.backbone.*, generator.head.*
    // and fc_post_a.* in that order.
    XCodec2Decoder(const XCodec2Config& config, seanet::ParameterSource& source, c10::Device device);

    // From a checkpoint: .ckpt / .pt / .bin (torch.save zip archive holding
    // the flat state dict) or .safetensors. Keys under generator. and
    // fc_post_a. load strictly; the encoder side (CodecEnc.,
    // SemanticEncoder_module., fc_prior., semantic_model.) and anything else
    // is left unread. `ignored`, when given, receives how many keys were left.
    static XCodec2Decoder load(const XCodec2Config& config, const std::filesystem::path& checkpoint, c10::Device device,
                               int64_t* ignored = nullptr);

    const XCodec2Config& config() const { return config_; }
    const ResidualFsq& quantizer() const { return quantizer_; }
    const IstftHead& head() const { return *head_; }

    // int64 [batch, frames] -> float32 [batch, frames, hidden_dim]: the
    // code, project_out, fc_post_a.
    at::Tensor embed_codes(const at::Tensor& indices) const;
    // float32 [batch, frames, hidden_dim] -> [batch, frames, hidden_dim]
    at::Tensor backbone(const at::Tensor& x) const;
    // int64 [batch, frames] -> float32 [batch, frames * hop]
    at::Tensor decode(const at::Tensor& indices) const;

private:
    XCodec2Config config_;
    c10::Device device_;
    ResidualFsq quantizer_;
    at::Tensor embed_w_, embed_b_;
    std::vector<ResnetBlock> prior_net_, post_net_;
    std::vector<TransformerBlock> transformers_;
    at::Tensor final_norm_w_, final_norm_b_;
    std::optional<IstftHead> head_;  // built after the backbone, in key order
    at::Tensor post_a_w_, post_a_b_;
    at::Tensor rope_cos_, rope_sin_;
};

// The keys and shapes a config asks for, in load order.
std::vector<seanet::ParameterSpec> decoder_keys(const XCodec2Config& config);
// Random weights for every decoder key (the window a Hann window), for
// tests and benchmarks.
seanet::StateDict random_decoder_state_dict(const XCodec2Config& config, uint64_t seed);

}  // namespace cadenza::xcodec2
