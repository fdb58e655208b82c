// The SEANet as a sequence of layers over [batch, channels, time]. Each
// layer evaluates a whole input, and layers of a causal decoder also chunk
// by chunk: a LayerStream takes successive pieces of the input and returns
// what is final so far, so that the pieces it returns, flush included,
// concatenate to the whole-input result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>

#include "activation.h"
#include "parameter_source.h"

namespace cadenza::seanet {

// An undefined tensor or one with no time steps: nothing to pass on.
bool has_samples(const at::Tensor& x);
// Concatenates along time, either side possibly without samples.
at::Tensor concat_time(const at::Tensor& first, const at::Tensor& second);

class LayerStream {
public:
    virtual ~LayerStream() = default;
    // The outputs that later input can no longer change (possibly none).
    virtual at::Tensor push(const at::Tensor& x) = 0;
    // The input has ended: every output not returned yet.
    virtual at::Tensor flush() = 0;
};

class Layer {
public:
    virtual ~Layer() = default;
    virtual at::Tensor forward(const at::Tensor& x) const = 0;
    // Throws cadenza::sdk::Error (unsupported) for a layer that needs the whole
    // input (non-causal padding, strides, GroupNorm, a bidirectional LSTM).
    virtual std::unique_ptr<LayerStream> stream() const = 0;
};

class Sequential : public Layer {
public:
    void add(std::unique_ptr<Layer> layer) { layers_.push_back(std::move(layer)); }
    at::Tensor forward(const at::Tensor& x) const override;
    std::unique_ptr<LayerStream> stream() const override;

private:
    std::vector<std::unique_ptr<Layer>> layers_;
};

class Identity : public Layer {
public:
    at::Tensor forward(const at::Tensor& x) const override { return x; }
    std::unique_ptr<LayerStream> stream() const override;
};

// A pointwise activation; Snake reads its alpha from "<prefix>.alpha".
class ActivationLayer : public Layer {
public:
    ActivationLayer(const ActivationSpec& spec, int64_t channels, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& x) const override;
    std::unique_ptr<LayerStream> stream() const override;

private:
    ActivationSpec spec_;
    at::Tensor snake_alpha_;
};

}  // namespace cadenza::seanet
