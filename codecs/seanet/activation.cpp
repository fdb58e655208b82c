#include "activation.h"

#include <set>

#include <ATen/ops/elu.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/leaky_relu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/tanh.h>
#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::seanet {

namespace {

struct KnownActivation {
    const char* name;
    ActivationKind kind;
    const char* parameter;  // the keyword argument kept in `parameter`, or nullptr
    double default_value;
    std::set<std::string> ignored;  // accepted keyword arguments without effect at inference
};

const std::vector<KnownActivation>& known_activations() {
    static const std::vector<KnownActivation> known = {
        {"ELU", ActivationKind::elu, "alpha", 1.0, {"inplace"}},
        {"LeakyReLU", ActivationKind::leaky_relu, "negative_slope", 0.01, {"inplace"}},
        {"ReLU", ActivationKind::relu, nullptr, 0.0, {"inplace"}},
        {"GELU", ActivationKind::gelu, nullptr, 0.0, {}},
        {"SiLU", ActivationKind::silu, nullptr, 0.0, {"inplace"}},
        {"Tanh", ActivationKind::tanh, nullptr, 0.0, {}},
        {"Sigmoid", ActivationKind::sigmoid, nullptr, 0.0, {}},
        {"Snake", ActivationKind::snake, nullptr, 0.0, {}},
    };
    return known;
}

}  // namespace

ActivationSpec ActivationSpec::parse(const std::string& name, const nlohmann::json& params, const std::string& where) {
    for (const KnownActivation& known : known_activations()) {
        if (name != known.name) continue;
        ActivationSpec spec{known.kind, known.default_value};
        // The reference builds Snake from the channel count alone and never
        // passes it activation_params.
        if (known.kind == ActivationKind::snake || params.is_null()) return spec;
        if (!params.is_object())
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": the activation parameters must be an object");
        for (const auto& [key, value] : params.items()) {
            if (known.parameter && key == known.parameter) {
                if (!value.is_number())
                    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": " + name + "'s " + key + " must be a number");
                spec.parameter = value.get<double>();
            } else if (known.kind == ActivationKind::gelu && key == "approximate") {
                if (value != "none")
                    throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": only GELU(approximate='none') is supported");
            } else if (!known.ignored.count(key)) {
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                            where + ": " + name + " takes no argument '" + key + "' (torch.nn." + name +
                                " would reject it too)");
            }
        }
        return spec;
    }
    std::string names;
    for (const KnownActivation& known : known_activations()) names += std::string(names.empty() ? "" : ", ") + known.name;
    throw sdk::Error(CDZ_STATUS_UNSUPPORTED, where + ": unsupported activation '" + name + "' (supported: " + names + ")");
}

std::string ActivationSpec::name() const {
    for (const KnownActivation& known : known_activations())
        if (known.kind == kind) return known.name;
    return "?";
}

at::Tensor apply_activation(const ActivationSpec& spec, const at::Tensor& x, const at::Tensor& snake_alpha) {
    switch (spec.kind) {
    case ActivationKind::elu: return at::elu(x, spec.parameter);
    case ActivationKind::leaky_relu: return at::leaky_relu(x, spec.parameter);
    case ActivationKind::relu: return at::relu(x);
    case ActivationKind::gelu: return at::gelu(x);
    case ActivationKind::silu: return at::silu(x);
    case ActivationKind::tanh: return at::tanh(x);
    case ActivationKind::sigmoid: return at::sigmoid(x);
    case ActivationKind::snake:
        // As the reference writes it: x + 1 / (alpha + 1e-9) * sin(alpha * x)^2.
        return x + (snake_alpha + 1e-9).reciprocal() * at::sin(snake_alpha * x).pow(2);
    }
    throw sdk::Error(CDZ_STATUS_INTERNAL, "unknown activation kind");
}

}  // namespace cadenza::seanet
