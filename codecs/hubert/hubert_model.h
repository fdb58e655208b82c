// HuBERT as torchaudio 0.13's Wav2Vec2Model (the hubert_base builder)
// computes it: the convolutional feature extractor, the feature projection,
// the convolutional positional embedding, the transformer encoder
// (post-norm or pre-norm), extract_features and forward; plus the k-means
// tokenizer on one layer. Functional ATen ops in float32; no autograd.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "hubert_config.h"
#include "parameter_source.h"

namespace cadenza::hubert {

enum class KeyNames { torchaudio, hugging_face };

// The Hugging Face HubertModel name of a torchaudio Wav2Vec2Model key.
std::string hugging_face_key(const std::string& torchaudio_key);

// Every intermediate result of one run ([batch, frames, channels] each).
struct HubertOutputs {
    at::Tensor conv_features;          // feature extractor output
    at::Tensor projected;              // feature projection output
    at::Tensor encoder_input;          // input of transformer layer 0
    std::vector<at::Tensor> layers;    // extract_features: output of layer 0, 1, ...
    at::Tensor output;                 // forward (pre-norm: the final LayerNorm applied)
};

class HubertModel {
public:
    // Takes every tensor under its torchaudio name from `source`, in
    // state_dict order.
    HubertModel(const HubertConfig& config, seanet::ParameterSource& source);
    HubertModel(HubertModel&&) noexcept;
    HubertModel& operator=(HubertModel&&) noexcept;
    ~HubertModel();

    // Reads safetensors / torch.save zip (pytorch_model.bin, .pt) with
    // torchaudio or Hugging Face key names; strict: every key taken, every
    // shape as the config asks. Errors name the file and the key.
    static HubertModel load(const HubertConfig& config, const std::filesystem::path& checkpoint, c10::Device device);
    // Same from tensors already read; `origin` names them in messages.
    static HubertModel from_state_dict(const HubertConfig& config, seanet::StateDict tensors, const std::string& origin,
                                       c10::Device device);

    const HubertConfig& config() const { return config_; }
    c10::Device device() const { return device_; }

    // waveforms float32 [batch, samples] -> [batch, frames, conv_dim[-1]]
    at::Tensor feature_extractor(const at::Tensor& waveforms) const;
    // torchaudio extract_features: the outputs of the first `num_layers`
    // transformer layers (all when num_layers <= 0).
    std::vector<at::Tensor> extract_features(const at::Tensor& waveforms, int64_t num_layers = 0) const;
    // torchaudio forward.
    at::Tensor forward(const at::Tensor& waveforms) const;
    // Everything at once (tests).
    HubertOutputs run(const at::Tensor& waveforms) const;

private:
    struct Weights;
    at::Tensor check_input(const at::Tensor& waveforms) const;
    at::Tensor encoder_input(const at::Tensor& conv_features, at::Tensor* projected) const;
    at::Tensor layer(size_t index, const at::Tensor& x) const;
    at::Tensor final_norm(const at::Tensor& x) const;

    HubertConfig config_;
    c10::Device device_;
    std::unique_ptr<Weights> w_;
};

// k-means centroids for discrete units: nearest centroid by L2.
class KMeansTokenizer {
public:
    // `layer`: 1-based transformer layer whose output is clustered
    // (torchaudio extract_features(...)[layer - 1], Hugging Face
    // hidden_states[layer]); 0 when the file does not say.
    KMeansTokenizer(at::Tensor centroids, int64_t layer);
    // A safetensors file with `centroids` [K, dim] (any float dtype) and
    // optionally metadata "layer" (1-based). Errors name the file.
    static KMeansTokenizer load(const std::filesystem::path& path, c10::Device device);

    const at::Tensor& centroids() const { return centroids_; }
    int64_t size() const { return centroids_.size(0); }
    int64_t dimension() const { return centroids_.size(1); }
    int64_t layer() const { return layer_; }
    // features [..., dim] -> int64 [...]: the index of the nearest centroid.
    at::Tensor assign(const at::Tensor& features) const;

private:
    at::Tensor centroids_;
    at::Tensor centroid_norms_;
    int64_t layer_;
};

}  // namespace cadenza::hubert
