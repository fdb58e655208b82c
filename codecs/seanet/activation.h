// The activations a SEANet may name, as the reference builds them with
// getattr(torch.nn, name)(**activation_params), plus SpeechTokenizer's
// Snake, whose per-channel alpha is a learned parameter.
#pragma once

#include <string>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <nlohmann/json_fwd.hpp>

namespace cadenza::seanet {

enum class ActivationKind { elu, leaky_relu, relu, gelu, silu, tanh, sigmoid, snake };

struct ActivationSpec {
    ActivationKind kind = ActivationKind::elu;
    double parameter = 1.0;  // ELU: alpha; LeakyReLU: negative_slope; unused otherwise

    // `name` is the torch.nn class name ("ELU", "LeakyReLU", ...) or "Snake";
    // `params` its keyword arguments (an object, or null for none). Throws
    // cadenza::sdk::Error naming `where` for an unknown name or argument.
    static ActivationSpec parse(const std::string& name, const nlohmann::json& params, const std::string& where);
    std::string name() const;
};

// An activation applied to [batch, channels, time]; `snake_alpha` is the
// Snake's [1, channels, 1] parameter and undefined otherwise.
at::Tensor apply_activation(const ActivationSpec& spec, const at::Tensor& x, const at::Tensor& snake_alpha = {});

}  // namespace cadenza::seanet
