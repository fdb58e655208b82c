#include "mel_autoencoder.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <set>
#include <stdexcept>

namespace cadenza::mel_fsq {
namespace {

std::string shape_text(at::IntArrayRef shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

}  // namespace

std::vector<std::pair<std::string, std::vector<int64_t>>> MelAutoencoder::expected_shapes(const MelCodecConfig& c) {
    std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
    auto add_conv = [&](const std::string& name, int64_t out, int64_t in) {
        shapes.push_back({name + ".weight", {out, in, c.kernel_size}});
        shapes.push_back({name + ".bias", {out}});
    };
    auto add_side = [&](const std::string& side, int64_t in, int64_t out, int64_t blocks) {
        add_conv(side + ".input", c.width, in);
        for (int64_t b = 0; b < blocks; ++b) {
            add_conv(side + ".blocks." + std::to_string(b) + ".conv1", c.width, c.width);
            add_conv(side + ".blocks." + std::to_string(b) + ".conv2", c.width, c.width);
        }
        add_conv(side + ".output", out, c.width);
    };
    add_side("encoder", c.n_mels, c.latent_dim(), c.encoder_blocks);
    add_side("decoder", c.latent_dim(), c.n_mels, c.decoder_blocks);
    return shapes;
}

MelAutoencoder MelAutoencoder::initialize(const MelCodecConfig& config, uint64_t seed) {
    config.validate();
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    MelAutoencoder model;
    model.config_ = config;
    for (const auto& [name, shape] : expected_shapes(config)) {
        const bool is_weight = name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0;
        const int64_t fan_in = shape.size() == 3 ? shape[1] * shape[2] : config.width * config.kernel_size;
        const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
        at::Tensor t = (at::rand(shape, generator, at::kFloat) * 2.0 - 1.0) * bound;
        if (is_weight && name.find(".conv2.") != std::string::npos) t.mul_(0.1);
        if (!is_weight && name.find(".conv2.") != std::string::npos) t.zero_();
        model.tensors_[name] = t;
    }
    return model;
}

MelAutoencoder MelAutoencoder::from_tensors(const MelCodecConfig& config, std::map<std::string, at::Tensor> tensors) {
    config.validate();
    MelAutoencoder model;
    model.config_ = config;
    std::set<std::string> expected;
    for (const auto& [name, shape] : expected_shapes(config)) {
        expected.insert(name);
        auto found = tensors.find(name);
        if (found == tensors.end()) throw std::invalid_argument("missing tensor '" + name + "'");
        if (found->second.sizes() != at::IntArrayRef(shape))
            throw std::invalid_argument("tensor '" + name + "' has shape " + shape_text(found->second.sizes()) +
                                        ", the config needs " + shape_text(shape));
        model.tensors_[name] = found->second.to(at::kFloat).contiguous();
    }
    for (const auto& [name, tensor] : tensors)
        if (!expected.count(name)) throw std::invalid_argument("unexpected tensor '" + name + "' for this config");
    return model;
}

std::vector<at::Tensor> MelAutoencoder::parameters() const {
    std::vector<at::Tensor> list;
    for (const auto& [name, tensor] : tensors_) list.push_back(tensor);
    return list;
}

void MelAutoencoder::to(const at::Device& device) {
    for (auto& [name, tensor] : tensors_) tensor = tensor.to(device);
}

at::Tensor MelAutoencoder::conv(const at::Tensor& x, const std::string& name) const {
    return at::conv1d(x, tensors_.at(name + ".weight"), tensors_.at(name + ".bias"), 1, config_.kernel_size / 2);
}

at::Tensor MelAutoencoder::stack(const at::Tensor& input, const std::string& side, int64_t blocks) const {
    at::Tensor x = conv(input, side + ".input");
    for (int64_t b = 0; b < blocks; ++b) {
        const std::string block = side + ".blocks." + std::to_string(b);
        x = x + conv(at::gelu(conv(at::gelu(x), block + ".conv1")), block + ".conv2");
    }
    return conv(at::gelu(x), side + ".output");
}

at::Tensor MelAutoencoder::encode(const at::Tensor& mel) const {
    return stack(mel, "encoder", config_.encoder_blocks);
}

at::Tensor MelAutoencoder::decode(const at::Tensor& latent) const {
    return stack(latent, "decoder", config_.decoder_blocks);
}

}  // namespace cadenza::mel_fsq
