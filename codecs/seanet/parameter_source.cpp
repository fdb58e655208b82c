#include "parameter_source.h"

#include <cmath>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/zeros.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::seanet {

std::string shape_text(const Shape& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

StateDictSource::StateDictSource(StateDict tensors, std::string origin, c10::Device device)
    : origin_(std::move(origin)), device_(device) {
    for (auto& [name, tensor] : tensors) {
        order_.push_back(name);
        tensors_.emplace(name, std::move(tensor));
    }
}

at::Tensor StateDictSource::take(const std::string& name, const Shape& shape, ParameterRole) {
    const auto found = tensors_.find(name);
    if (found == tensors_.end())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    origin_ + ": missing key '" + name + "' (the config expects shape " + shape_text(shape) + ")");
    const at::Tensor& tensor = found->second;
    const Shape actual(tensor.sizes().begin(), tensor.sizes().end());
    if (actual != shape)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, origin_ + ": key '" + name + "' has shape " + shape_text(actual) +
                                                   ", the config expects " + shape_text(shape));
    if (!tensor.is_floating_point())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, origin_ + ": key '" + name + "' holds integers, not floating point");
    taken_.insert(name);
    return tensor.to(device_, at::kFloat).contiguous();
}

void StateDictSource::expect_all_taken() const {
    std::vector<std::string> unexpected;
    for (const std::string& name : order_)
        if (!taken_.count(name)) unexpected.push_back(name);
    if (unexpected.empty()) return;
    std::string list;
    for (size_t i = 0; i < unexpected.size() && i < 5; ++i) list += (i ? ", '" : "'") + unexpected[i] + "'";
    if (unexpected.size() > 5) list += ", ...";
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                origin_ + ": unexpected key '" + unexpected.front() + "': the config's model has no such tensor (" +
                    std::to_string(unexpected.size()) + " unexpected in all: " + list + ")");
}

ParameterRecorder::ParameterRecorder(c10::Device device) : device_(device) {}

ParameterRecorder::ParameterRecorder(uint64_t seed, c10::Device device)
    : device_(device), random_(true), generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

at::Tensor ParameterRecorder::take(const std::string& name, const Shape& shape, ParameterRole role) {
    specs_.push_back({name, shape});
    const auto cpu = at::TensorOptions().dtype(at::kFloat);
    at::Tensor tensor;
    if (!random_) {
        tensor = at::zeros(shape, cpu);
    } else {
        int64_t fan_in = 1;
        for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
        switch (role) {
        case ParameterRole::conv_weight:
        case ParameterRole::linear_weight:
            tensor = at::randn(shape, generator_, cpu) / std::sqrt(static_cast<double>(fan_in));
            break;
        case ParameterRole::lstm_weight:
        case ParameterRole::lstm_bias: {
            // PyTorch's LSTM initialisation: U(-1/sqrt(H), 1/sqrt(H)).
            const double bound = 1.0 / std::sqrt(static_cast<double>(shape[0] / 4));
            tensor = (at::rand(shape, generator_, cpu) * 2 - 1) * bound;
            break;
        }
        case ParameterRole::bias: tensor = at::randn(shape, generator_, cpu) * 0.05; break;
        case ParameterRole::codebook:
        case ParameterRole::spectral_vector: tensor = at::randn(shape, generator_, cpu); break;
        case ParameterRole::weight_norm_gain:
        case ParameterRole::norm_scale:
        case ParameterRole::snake_alpha: tensor = at::ones(shape, cpu); break;
        case ParameterRole::norm_shift:
        case ParameterRole::unused_buffer: tensor = at::zeros(shape, cpu); break;
        }
    }
    tensor = tensor.to(device_);
    tensors_.emplace_back(name, tensor);
    return tensor;
}

}  // namespace cadenza::seanet
