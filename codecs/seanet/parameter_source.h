// Where a model's tensors come from while it is built: a checkpoint,
// checked key by key as the reference's strict load_state_dict does, or a
// recorder that only notes which keys and shapes a config asks for and
// hands out zeros or random values (key lists, benchmarks).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

namespace cadenza::seanet {

// What a tensor is for; random weights are drawn according to it.
enum class ParameterRole {
    conv_weight,       // a convolution's weight, weight_v or weight_orig
    weight_norm_gain,  // weight_g
    bias,
    norm_scale,        // GroupNorm weight
    norm_shift,        // GroupNorm bias
    spectral_vector,   // spectral_norm's weight_u / weight_v
    lstm_weight,
    lstm_bias,
    linear_weight,
    codebook,
    snake_alpha,
    unused_buffer,     // training-only state the checkpoint carries (cluster_size, embed_avg, inited)
};

using Shape = std::vector<int64_t>;
std::string shape_text(const Shape& shape);  // "[2, 3]"

struct ParameterSpec {
    std::string name;
    Shape shape;
};

class ParameterSource {
public:
    virtual ~ParameterSource() = default;
    // The float32 tensor stored as `name`, of exactly `shape`, on the
    // source's device.
    virtual at::Tensor take(const std::string& name, const Shape& shape, ParameterRole role) = 0;
};

// Tensors by name in file order (any floating dtype; converted on take).
using StateDict = std::vector<std::pair<std::string, at::Tensor>>;

class StateDictSource : public ParameterSource {
public:
    // `origin` names the checkpoint in messages.
    StateDictSource(StateDict tensors, std::string origin, c10::Device device);
    // Throws cadenza::sdk::Error naming the key when it is missing or has another shape.
    at::Tensor take(const std::string& name, const Shape& shape, ParameterRole role) override;
    // Throws naming the keys no module took.
    void expect_all_taken() const;

private:
    std::unordered_map<std::string, at::Tensor> tensors_;
    std::vector<std::string> order_;
    std::set<std::string> taken_;
    std::string origin_;
    c10::Device device_;
};

// Records every request in order and returns zeros, or with a seed, random
// values scaled so that activations stay of order one.
class ParameterRecorder : public ParameterSource {
public:
    explicit ParameterRecorder(c10::Device device = c10::Device(c10::kCPU));
    ParameterRecorder(uint64_t seed, c10::Device device);
    at::Tensor take(const std::string& name, const Shape& shape, ParameterRole role) override;
    const std::vector<ParameterSpec>& specs() const { return specs_; }
    // The recorded tensors as a state dict (random weights for a benchmark).
    const StateDict& tensors() const { return tensors_; }

private:
    c10::Device device_;
    bool random_ = false;
    at::Generator generator_;
    std::vector<ParameterSpec> specs_;
    StateDict tensors_;
};

}  // namespace cadenza::seanet
