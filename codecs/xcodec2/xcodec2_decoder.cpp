#include "xcodec2_decoder.h"

#include <cmath>
#include <fstream>

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/conv1d.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/group_norm.h>
#include <ATen/ops/hann_window.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/stack.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "safetensors.h"
#include "torch_checkpoint.h"

namespace cadenza::xcodec2 {

using seanet::ParameterRole;
using seanet::ParameterSource;

void XCodec2Config::validate() const {
    auto fail = [](const std::string& what) { throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "xcodec2 config: " + what); };
    if (sample_rate <= 0 || hidden_dim <= 0 || depth < 0 || heads <= 0 || hop_length <= 0 || vq_dim <= 0 ||
        resnet_blocks < 0 || group_norm_groups <= 0)
        fail("sizes must be positive");
    if (hidden_dim % heads != 0) fail("hidden_dim " + std::to_string(hidden_dim) + " is not a multiple of heads");
    if (pos_emb_dim != head_dim())
        fail("pos_emb_dim " + std::to_string(pos_emb_dim) + " must equal hidden_dim / heads = " +
             std::to_string(head_dim()) + " (the reference's rotary embedding reshapes by it)");
    if (head_dim() % 2 != 0) fail("hidden_dim / heads must be even");
    if (heads > 4096) fail("heads above torchtune's max_seq_len 4096");
    if (hidden_dim % group_norm_groups != 0) fail("hidden_dim is not a multiple of the GroupNorm groups");
    if (levels.empty()) fail("levels is empty");
}

at::Tensor ResnetBlock::forward(const at::Tensor& x) const {
    at::Tensor h = at::silu(at::group_norm(x, groups, norm1_w, norm1_b, 1e-6));
    h = at::conv1d(h, conv1_w, conv1_b, 1, 1);
    h = at::silu(at::group_norm(h, groups, norm2_w, norm2_b, 1e-6));
    h = at::conv1d(h, conv2_w, conv2_b, 1, 1);
    return x + h;
}

namespace {

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) {
    return x * at::rsqrt((x * x).mean(-1, true) + 1e-6) * weight;
}

}  // namespace

at::Tensor rotate_by_head(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    std::vector<int64_t> pairs(x.sizes().begin(), x.sizes().end() - 1);
    pairs.push_back(x.size(-1) / 2);
    pairs.push_back(2);
    const at::Tensor shaped = x.reshape(pairs);  // [batch, heads, time, d / 2, 2]
    const at::Tensor x0 = shaped.select(-1, 0);
    const at::Tensor x1 = shaped.select(-1, 1);
    return at::stack({x0 * cos - x1 * sin, x1 * cos + x0 * sin}, -1).reshape(x.sizes());
}

at::Tensor TransformerBlock::forward(const at::Tensor& x, const at::Tensor& rope_cos, const at::Tensor& rope_sin,
                                     int64_t heads) const {
    const int64_t batch = x.size(0), time = x.size(1), dim = x.size(2), head_dim = dim / heads;
    // 'b t (r h d) -> r b h t d'
    const at::Tensor qkv = at::linear(rms_norm(x, att_norm_w), c_attn_w).view({batch, time, 3, heads, head_dim})
                               .permute({2, 0, 3, 1, 4});
    const at::Tensor q = rotate_by_head(qkv[0], rope_cos, rope_sin);
    const at::Tensor k = rotate_by_head(qkv[1], rope_cos, rope_sin);
    const at::Tensor v = qkv[2];
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(head_dim)));
    const at::Tensor y = at::matmul(at::softmax(scores, -1), v).permute({0, 2, 1, 3}).reshape({batch, time, dim});
    const at::Tensor h = x + at::linear(y, c_proj_w);
    return h + at::linear(at::silu(at::linear(rms_norm(h, ffn_norm_w), fc1_w)), fc2_w);
}

namespace {

ResnetBlock take_resnet(ParameterSource& source, const std::string& p, int64_t dim, int64_t groups) {
    ResnetBlock block;
    block.groups = groups;
    block.norm1_w = source.take(p + "norm1.weight", {dim}, ParameterRole::norm_scale);
    block.norm1_b = source.take(p + "norm1.bias", {dim}, ParameterRole::norm_shift);
    block.conv1_w = source.take(p + "conv1.weight", {dim, dim, 3}, ParameterRole::conv_weight);
    block.conv1_b = source.take(p + "conv1.bias", {dim}, ParameterRole::bias);
    block.norm2_w = source.take(p + "norm2.weight", {dim}, ParameterRole::norm_scale);
    block.norm2_b = source.take(p + "norm2.bias", {dim}, ParameterRole::norm_shift);
    block.conv2_w = source.take(p + "conv2.weight", {dim, dim, 3}, ParameterRole::conv_weight);
    block.conv2_b = source.take(p + "conv2.bias", {dim}, ParameterRole::bias);
    return block;
}

TransformerBlock take_transformer(ParameterSource& source, const std::string& p, int64_t dim) {
    TransformerBlock block;
    block.att_norm_w = source.take(p + "att_norm.weight", {dim}, ParameterRole::norm_scale);
    block.ffn_norm_w = source.take(p + "ffn_norm.weight", {dim}, ParameterRole::norm_scale);
    block.c_attn_w = source.take(p + "att.c_attn.weight", {3 * dim, dim}, ParameterRole::linear_weight);
    block.c_proj_w = source.take(p + "att.c_proj.weight", {dim, dim}, ParameterRole::linear_weight);
    block.fc1_w = source.take(p + "mlp.fc1.weight", {4 * dim, dim}, ParameterRole::linear_weight);
    block.fc2_w = source.take(p + "mlp.fc2.weight", {dim, 4 * dim}, ParameterRole::linear_weight);
    return block;
}

}  // namespace

XCodec2Decoder::XCodec2Decoder(const XCodec2Config& config, ParameterSource& source, c10::Device device)
    : config_((config.validate(), config)),
      device_(device),
      quantizer_(config.levels, config.vq_dim, source, "generator.quantizer.") {
    const int64_t dim = config_.hidden_dim;
    const std::string b = "generator.backbone.";
    embed_w_ = source.take(b + "embed.weight", {dim, dim, 7}, ParameterRole::conv_weight);
    embed_b_ = source.take(b + "embed.bias", {dim}, ParameterRole::bias);
    for (int64_t i = 0; i < config_.resnet_blocks; ++i)
        prior_net_.push_back(take_resnet(source, b + "prior_net." + std::to_string(i) + ".", dim, config_.group_norm_groups));
    for (int64_t i = 0; i < config_.depth; ++i)
        transformers_.push_back(take_transformer(source, b + "transformers." + std::to_string(i) + ".", dim));
    final_norm_w_ = source.take(b + "final_layer_norm.weight", {dim}, ParameterRole::norm_scale);
    final_norm_b_ = source.take(b + "final_layer_norm.bias", {dim}, ParameterRole::norm_shift);
    for (int64_t i = 0; i < config_.resnet_blocks; ++i)
        post_net_.push_back(take_resnet(source, b + "post_net." + std::to_string(i) + ".", dim, config_.group_norm_groups));
    head_.emplace(dim, config_.n_fft(), config_.hop_length, source, "generator.head.");
    post_a_w_ = source.take("fc_post_a.weight", {dim, config_.vq_dim}, ParameterRole::linear_weight);
    post_a_b_ = source.take("fc_post_a.bias", {dim}, ParameterRole::bias);

    // torchtune's cache in float32: theta_i = 1 / base^(2i / d), angle = position * theta.
    const int64_t d = config_.head_dim();
    const auto f32 = at::TensorOptions().dtype(at::kFloat);
    const at::Tensor theta = 1.0 / at::pow(config_.rope_base, at::arange(0, d, 2, f32) / static_cast<double>(d));
    const at::Tensor angles = at::outer(at::arange(config_.heads, f32), theta);  // [heads, d / 2]
    rope_cos_ = at::cos(angles).unsqueeze(1).to(device_);
    rope_sin_ = at::sin(angles).unsqueeze(1).to(device_);
}

at::Tensor XCodec2Decoder::embed_codes(const at::Tensor& indices) const {
    return at::linear(quantizer_.decode(indices.to(device_)), post_a_w_, post_a_b_);
}

at::Tensor XCodec2Decoder::backbone(const at::Tensor& input) const {
    at::Tensor x = at::conv1d(input.transpose(1, 2), embed_w_, embed_b_, 1, 3);
    for (const ResnetBlock& block : prior_net_) x = block.forward(x);
    x = x.transpose(1, 2);
    for (const TransformerBlock& block : transformers_) x = block.forward(x, rope_cos_, rope_sin_, config_.heads);
    x = x.transpose(1, 2);
    for (const ResnetBlock& block : post_net_) x = block.forward(x);
    return at::layer_norm(x.transpose(1, 2), {config_.hidden_dim}, final_norm_w_, final_norm_b_, 1e-6);
}

at::Tensor XCodec2Decoder::decode(const at::Tensor& indices) const {
    if (indices.dim() != 2) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "decode: expected indices [batch, frames]");
    const int64_t size = quantizer_.fsq().codebook_size();
    if (indices.numel() > 0) {
        const int64_t low = indices.min().item<int64_t>(), high = indices.max().item<int64_t>();
        if (low < 0 || high >= size)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "decode: code " + std::to_string(low < 0 ? low : high) +
                                                         " outside [0, " + std::to_string(size) + ")");
    }
    return head_->forward(backbone(embed_codes(indices)));
}

namespace {

bool wanted(const std::string& name) {
    return name.rfind("generator.", 0) == 0 || name.rfind("fc_post_a.", 0) == 0;
}

at::Tensor float_tensor(std::vector<float> values, const std::vector<int64_t>& shape) {
    return at::from_blob(values.data(), shape, at::kFloat).clone();
}

seanet::StateDict read_decoder_tensors(const std::filesystem::path& path, int64_t& ignored) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw sdk::Error(CDZ_STATUS_NOT_FOUND, "cannot open the checkpoint " + path.string());
    char magic[2] = {0, 0};
    file.read(magic, 2);
    file.close();
    seanet::StateDict tensors;
    ignored = 0;
    try {
        if (magic[0] == 'P' && magic[1] == 'K') {
            const auto checkpoint = torch_checkpoint::Checkpoint::open(path);
            for (const auto& entry : checkpoint.tensors()) {
                if (!wanted(entry.name)) {
                    ++ignored;
                    continue;
                }
                if (!torch_checkpoint::is_floating_point(entry.dtype))
                    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, checkpoint.where(entry.name) + ": expected floating point, found " +
                                                               torch_checkpoint::dtype_name(entry.dtype));
                tensors.emplace_back(entry.name, float_tensor(checkpoint.read_f32(entry), entry.shape));
            }
            if (tensors.empty() && !checkpoint.skipped().empty())
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                            path.string() + ": no generator.* tensors at the top level (a Lightning .ckpt keeps them "
                                            "under 'state_dict': save that dict on its own, or use safetensors)");
        } else {
            const safetensors::File st(path);
            for (const auto& info : st.tensors()) {
                if (!wanted(info.name)) {
                    ++ignored;
                    continue;
                }
                tensors.emplace_back(info.name, float_tensor(st.read_f32(info.name), info.shape));
            }
        }
    } catch (const torch_checkpoint::TorchCheckpointError& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    std::string("cannot read the checkpoint: ") + e.what() +
                        " (a Lightning .ckpt nests the state dict under 'state_dict' with other objects: save "
                        "ckpt['state_dict'] on its own with torch.save, or use the safetensors release)");
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    std::string("cannot read the checkpoint (neither a torch.save zip archive nor safetensors): ") +
                        e.what());
    }
    return tensors;
}

}  // namespace

XCodec2Decoder XCodec2Decoder::load(const XCodec2Config& config, const std::filesystem::path& checkpoint,
                                    c10::Device device, int64_t* ignored) {
    int64_t left = 0;
    seanet::StateDictSource source(read_decoder_tensors(checkpoint, left), checkpoint.string(), device);
    XCodec2Decoder decoder(config, source, device);
    source.expect_all_taken();
    if (ignored) *ignored = left;
    return decoder;
}

std::vector<seanet::ParameterSpec> decoder_keys(const XCodec2Config& config) {
    seanet::ParameterRecorder recorder;
    XCodec2Decoder decoder(config, recorder, c10::Device(c10::kCPU));
    return recorder.specs();
}

seanet::StateDict random_decoder_state_dict(const XCodec2Config& config, uint64_t seed) {
    seanet::ParameterRecorder recorder(seed, c10::Device(c10::kCPU));
    XCodec2Decoder decoder(config, recorder, c10::Device(c10::kCPU));
    seanet::StateDict tensors = recorder.tensors();
    for (auto& [name, tensor] : tensors)
        if (name == "generator.head.istft.window")
            tensor = at::hann_window(config.n_fft(), at::TensorOptions().dtype(at::kFloat));  // periodic, as torch's
    return tensors;
}

}  // namespace cadenza::xcodec2
