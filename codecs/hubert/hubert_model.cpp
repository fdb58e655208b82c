#include "hubert_model.h"

#include <cmath>

#include <ATen/ops/_weight_norm.h>
#include <ATen/ops/argmin.h>
#include <ATen/ops/conv1d.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/group_norm.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "safetensors.h"
#include "state_dict_file.h"

namespace cadenza::hubert {

using seanet::ParameterRole;
using seanet::ParameterSource;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Hands out tensors asked for by torchaudio name under the file's names.
class RenamingSource : public ParameterSource {
public:
    RenamingSource(ParameterSource& inner, KeyNames names) : inner_(inner), names_(names) {}
    at::Tensor take(const std::string& name, const seanet::Shape& shape, ParameterRole role) override {
        return inner_.take(names_ == KeyNames::torchaudio ? name : hugging_face_key(name), shape, role);
    }

private:
    ParameterSource& inner_;
    KeyNames names_;
};

struct LayerNormWeights {
    at::Tensor weight, bias;
    void take(ParameterSource& s, const std::string& prefix, int64_t size) {
        weight = s.take(prefix + ".weight", {size}, ParameterRole::norm_scale);
        bias = s.take(prefix + ".bias", {size}, ParameterRole::norm_shift);
    }
};

struct LinearWeights {
    at::Tensor weight, bias;
    void take(ParameterSource& s, const std::string& prefix, int64_t out, int64_t in) {
        weight = s.take(prefix + ".weight", {out, in}, ParameterRole::linear_weight);
        bias = s.take(prefix + ".bias", {out}, ParameterRole::bias);
    }
    at::Tensor operator()(const at::Tensor& x) const { return at::linear(x, weight, bias); }
};

}  // namespace

std::string hugging_face_key(const std::string& key) {
    if (starts_with(key, "encoder.feature_projection.")) return key.substr(8);
    if (starts_with(key, "encoder.transformer.")) return "encoder." + key.substr(20);
    return key;
}

struct HubertModel::Weights {
    struct Conv {
        at::Tensor weight, bias;
        int64_t stride = 1;
        bool has_norm = false;
        LayerNormWeights norm;
    };
    struct Layer {
        LinearWeights q, k, v, out;
        LayerNormWeights layer_norm, final_layer_norm;
        LinearWeights intermediate, output;
    };
    std::vector<Conv> convs;
    bool projection_norm = false;
    LayerNormWeights projection_layer_norm;
    LinearWeights projection;
    at::Tensor pos_weight, pos_bias;
    LayerNormWeights encoder_norm;
    std::vector<Layer> layers;
};

HubertModel::HubertModel(HubertModel&&) noexcept = default;
HubertModel& HubertModel::operator=(HubertModel&&) noexcept = default;
HubertModel::~HubertModel() = default;

HubertModel::HubertModel(const HubertConfig& config, ParameterSource& s)
    : config_(config), device_(c10::kCPU), w_(std::make_unique<Weights>()) {
    config_.validate("HuBERT config");
    Weights& w = *w_;
    int64_t in = 1;
    for (size_t i = 0; i < config.conv_dim.size(); ++i) {
        const std::string p = "feature_extractor.conv_layers." + std::to_string(i);
        Weights::Conv conv;
        const int64_t out = config.conv_dim[i];
        conv.has_norm = config.extractor_norm == ExtractorNorm::layer || i == 0;
        if (conv.has_norm) conv.norm.take(s, p + ".layer_norm", out);
        conv.weight = s.take(p + ".conv.weight", {out, in, config.conv_kernel[i]}, ParameterRole::conv_weight);
        if (config.conv_bias) conv.bias = s.take(p + ".conv.bias", {out}, ParameterRole::bias);
        conv.stride = config.conv_stride[i];
        w.convs.push_back(std::move(conv));
        in = out;
    }
    device_ = w.convs.front().weight.device();
    const int64_t e = config.hidden_size;
    w.projection_norm = config.feat_proj_layer_norm;
    if (w.projection_norm) w.projection_layer_norm.take(s, "encoder.feature_projection.layer_norm", in);
    w.projection.take(s, "encoder.feature_projection.projection", e, in);

    const std::string t = "encoder.transformer.";
    const int64_t k = config.num_conv_pos_embeddings;
    w.pos_bias = s.take(t + "pos_conv_embed.conv.bias", {e}, ParameterRole::bias);
    const at::Tensor g = s.take(t + "pos_conv_embed.conv.weight_g", {1, 1, k}, ParameterRole::weight_norm_gain);
    const at::Tensor v = s.take(t + "pos_conv_embed.conv.weight_v", {e, e / config.num_conv_pos_embedding_groups, k},
                                ParameterRole::conv_weight);
    // weight_norm(dim=2): the norm runs over dims 0 and 1, one per kernel tap.
    w.pos_weight = at::_weight_norm(v, g, 2);
    w.encoder_norm.take(s, t + "layer_norm", e);
    for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
        const std::string p = t + "layers." + std::to_string(i) + ".";
        Weights::Layer layer;
        layer.k.take(s, p + "attention.k_proj", e, e);
        layer.v.take(s, p + "attention.v_proj", e, e);
        layer.q.take(s, p + "attention.q_proj", e, e);
        layer.out.take(s, p + "attention.out_proj", e, e);
        layer.layer_norm.take(s, p + "layer_norm", e);
        layer.intermediate.take(s, p + "feed_forward.intermediate_dense", config.intermediate_size, e);
        layer.output.take(s, p + "feed_forward.output_dense", e, config.intermediate_size);
        layer.final_layer_norm.take(s, p + "final_layer_norm", e);
        w.layers.push_back(std::move(layer));
    }
}

HubertModel HubertModel::from_state_dict(const HubertConfig& config, seanet::StateDict tensors,
                                         const std::string& origin, c10::Device device) {
    // Which names: torchaudio's Wav2Vec2Model or Hugging Face's HubertModel.
    bool torchaudio = false, hugging_face = false;
    for (auto& [name, tensor] : tensors) {
        if (starts_with(name, "encoder.transformer.") || starts_with(name, "encoder.feature_projection.")) torchaudio = true;
        if (starts_with(name, "feature_projection.") || starts_with(name, "encoder.layers.") ||
            starts_with(name, "encoder.pos_conv_embed.") || name == "masked_spec_embed")
            hugging_face = true;
    }
    if (torchaudio == hugging_face)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    origin + (torchaudio ? ": mixes torchaudio (encoder.transformer.*) and Hugging Face (encoder.layers.*) "
                                           "key names"
                                         : ": holds neither torchaudio Wav2Vec2Model nor Hugging Face HubertModel keys "
                                           "(expected encoder.transformer.* or encoder.layers.*)"));
    const KeyNames names = torchaudio ? KeyNames::torchaudio : KeyNames::hugging_face;
    if (names == KeyNames::hugging_face) {
        // Newer transformers versions save the weight-norm parametrization under these names.
        const std::string p = "encoder.pos_conv_embed.conv.";
        for (auto& [name, tensor] : tensors) {
            if (name == p + "parametrizations.weight.original0") name = p + "weight_g";
            if (name == p + "parametrizations.weight.original1") name = p + "weight_v";
        }
    }
    bool has_mask_embed = false;
    for (auto& entry : tensors) has_mask_embed |= entry.first == "masked_spec_embed";
    seanet::StateDictSource source(std::move(tensors), origin, device);
    RenamingSource renamed(source, names);
    HubertModel model(config, renamed);
    // Hugging Face only, used in training (masking), not at inference.
    if (names == KeyNames::hugging_face && has_mask_embed)
        source.take("masked_spec_embed", {config.hidden_size}, ParameterRole::unused_buffer);
    source.expect_all_taken();
    model.device_ = device;
    return model;
}

HubertModel HubertModel::load(const HubertConfig& config, const std::filesystem::path& checkpoint, c10::Device device) {
    c10::InferenceMode inference;
    return from_state_dict(config, seanet::read_state_dict(checkpoint), checkpoint.string(), device);
}

at::Tensor HubertModel::check_input(const at::Tensor& waveforms) const {
    if (waveforms.dim() != 2)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "HuBERT expects waveforms [batch, samples], got " +
                                                     std::to_string(waveforms.dim()) + " dimensions");
    if (config_.frames(waveforms.size(1)) < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "HuBERT needs at least " + std::to_string(config_.min_samples()) +
                                                     " samples for one frame, got " + std::to_string(waveforms.size(1)));
    return waveforms.to(device_, at::kFloat);
}

at::Tensor HubertModel::feature_extractor(const at::Tensor& waveforms) const {
    at::Tensor x = check_input(waveforms).unsqueeze(1);
    for (const Weights::Conv& conv : w_->convs) {
        x = at::conv1d(x, conv.weight, conv.bias, conv.stride);
        if (conv.has_norm) {
            const int64_t channels = x.size(1);
            if (config_.extractor_norm == ExtractorNorm::group)  // one group per channel
                x = at::group_norm(x, channels, conv.norm.weight, conv.norm.bias, 1e-5);
            else
                x = at::layer_norm(x.transpose(1, 2), {channels}, conv.norm.weight, conv.norm.bias, 1e-5).transpose(1, 2);
        }
        x = at::gelu(x);
    }
    return x.transpose(1, 2);
}

at::Tensor HubertModel::encoder_input(const at::Tensor& conv_features, at::Tensor* projected) const {
    const Weights& w = *w_;
    const double eps = config_.layer_norm_eps;
    at::Tensor x = conv_features;
    if (w.projection_norm) x = at::layer_norm(x, {x.size(-1)}, w.projection_layer_norm.weight, w.projection_layer_norm.bias, eps);
    x = w.projection(x);
    if (projected) *projected = x;
    // Convolutional positional embedding: padding k / 2 both sides, one
    // trailing frame removed for an even kernel, then GELU.
    const int64_t k = config_.num_conv_pos_embeddings;
    at::Tensor pos = at::conv1d(x.transpose(1, 2), w.pos_weight, w.pos_bias, 1, k / 2, 1,
                                config_.num_conv_pos_embedding_groups);
    if (k % 2 == 0) pos = pos.narrow(2, 0, pos.size(2) - 1);
    x = x + at::gelu(pos).transpose(1, 2);
    // torchaudio's Transformer normalises here for a post-norm model and at
    // the end of forward for a pre-norm one.
    if (!config_.layer_norm_first)
        x = at::layer_norm(x, {x.size(-1)}, w.encoder_norm.weight, w.encoder_norm.bias, eps);
    return x;
}

at::Tensor HubertModel::layer(size_t index, const at::Tensor& input) const {
    const Weights::Layer& l = w_->layers[index];
    const double eps = config_.layer_norm_eps;
    const int64_t e = config_.hidden_size, heads = config_.num_attention_heads, d = e / heads;
    auto norm = [&](const LayerNormWeights& n, const at::Tensor& x) { return at::layer_norm(x, {e}, n.weight, n.bias, eps); };
    at::Tensor x = config_.layer_norm_first ? norm(l.layer_norm, input) : input;
    const int64_t batch = x.size(0), length = x.size(1);
    const at::Tensor q = l.q(x).view({batch, length, heads, d}).transpose(2, 1);
    const at::Tensor k = l.k(x).view({batch, length, heads, d}).permute({0, 2, 3, 1});
    const at::Tensor v = l.v(x).view({batch, length, heads, d}).transpose(2, 1);
    const at::Tensor weights = at::softmax(at::matmul(q, k) * (1.0 / std::sqrt(static_cast<double>(d))), -1);
    const at::Tensor attended = l.out(at::matmul(weights, v).transpose(2, 1).reshape({batch, length, e}));
    x = input + attended;
    auto feed_forward = [&](const at::Tensor& y) { return l.output(at::gelu(l.intermediate(y))); };
    if (config_.layer_norm_first) return x + feed_forward(norm(l.final_layer_norm, x));
    x = norm(l.layer_norm, x);
    return norm(l.final_layer_norm, x + feed_forward(x));
}

at::Tensor HubertModel::final_norm(const at::Tensor& x) const {
    if (!config_.layer_norm_first) return x;
    return at::layer_norm(x, {x.size(-1)}, w_->encoder_norm.weight, w_->encoder_norm.bias, config_.layer_norm_eps);
}

std::vector<at::Tensor> HubertModel::extract_features(const at::Tensor& waveforms, int64_t num_layers) const {
    c10::InferenceMode inference;
    const int64_t count = num_layers <= 0 ? config_.num_hidden_layers : std::min(num_layers, config_.num_hidden_layers);
    at::Tensor x = encoder_input(feature_extractor(waveforms), nullptr);
    std::vector<at::Tensor> outputs;
    for (int64_t i = 0; i < count; ++i) outputs.push_back(x = layer(static_cast<size_t>(i), x));
    return outputs;
}

at::Tensor HubertModel::forward(const at::Tensor& waveforms) const {
    return final_norm(extract_features(waveforms).back());
}

HubertOutputs HubertModel::run(const at::Tensor& waveforms) const {
    c10::InferenceMode inference;
    HubertOutputs out;
    out.conv_features = feature_extractor(waveforms);
    out.encoder_input = encoder_input(out.conv_features, &out.projected);
    at::Tensor x = out.encoder_input;
    for (size_t i = 0; i < w_->layers.size(); ++i) out.layers.push_back(x = layer(i, x));
    out.output = final_norm(x);
    return out;
}

KMeansTokenizer::KMeansTokenizer(at::Tensor centroids, int64_t layer) : centroids_(std::move(centroids)), layer_(layer) {
    if (centroids_.dim() != 2 || centroids_.size(0) < 1 || centroids_.size(1) < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "k-means centroids must be [K, dim] with K, dim >= 1");
    centroids_ = centroids_.to(at::kFloat).contiguous();
    centroid_norms_ = centroids_.pow(2).sum(-1);
}

KMeansTokenizer KMeansTokenizer::load(const std::filesystem::path& path, c10::Device device) {
    try {
        const safetensors::File file(path);
        if (!file.contains("centroids"))
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, file.where() + ": no tensor 'centroids' [K, dim]");
        const auto& info = file.info("centroids");
        if (info.shape.size() != 2 || info.shape[0] < 1 || info.shape[1] < 1)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, file.where("centroids") + ": expected shape [K, dim], found " +
                                                       safetensors::shape_string(info.shape));
        std::vector<float> values = file.read_f32("centroids");
        at::Tensor centroids = at::from_blob(values.data(), info.shape, at::kFloat).clone().to(device);
        int64_t layer = 0;
        const auto found = file.metadata().find("layer");
        if (found != file.metadata().end()) {
            size_t used = 0;
            try {
                layer = std::stoll(found->second, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != found->second.size() || layer < 1)
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, file.where() + ": metadata 'layer' = '" + found->second +
                                                           "' is not a layer number (1-based)");
        }
        return KMeansTokenizer(centroids, layer);
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, std::string("cannot read the k-means file: ") + e.what());
    }
}

at::Tensor KMeansTokenizer::assign(const at::Tensor& features) const {
    if (features.size(-1) != dimension())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "features of dimension " + std::to_string(features.size(-1)) +
                                                     " but the centroids have " + std::to_string(dimension()));
    const at::Tensor x = features.to(centroids_.device(), at::kFloat);
    // |x - c|^2 = |x|^2 - 2 x.c + |c|^2
    const at::Tensor distances = x.pow(2).sum(-1, true) - 2 * at::matmul(x, centroids_.t()) + centroid_norms_;
    return at::argmin(distances, -1);
}

}  // namespace cadenza::hubert
