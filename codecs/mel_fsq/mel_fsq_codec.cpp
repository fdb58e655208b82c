#include "mel_fsq_codec.h"

#include <stdexcept>

#include "mel_convolution_stack.h"
#include "safetensors.h"

namespace cadenza::mel_fsq {
namespace {

const char* const config_key = "cadenza.mel_fsq.config";

at::Tensor read_tensor(const safetensors::File& file, const safetensors::TensorInfo& info) {
    std::vector<float> values = file.read_f32(info.name);
    return at::tensor(values, at::kFloat).view(info.shape).clone();
}

}  // namespace

MelFsqCodec::MelFsqCodec(MelAutoencoder model, at::Tensor mel_mean, at::Tensor mel_std)
    : model_(std::move(model)),
      analysis_(model_.config()),
      quantizer_(model_.config().levels),
      mel_mean_(std::move(mel_mean)),
      mel_std_(std::move(mel_std)) {
    const int64_t n_mels = model_.config().n_mels;
    if (mel_mean_.dim() != 1 || mel_mean_.size(0) != n_mels || mel_std_.dim() != 1 || mel_std_.size(0) != n_mels)
        throw std::invalid_argument("mel_mean and mel_std must be [" + std::to_string(n_mels) + "]");
    if (!(mel_std_.min().item<float>() > 0.0f)) throw std::invalid_argument("mel_std must be positive");
}

const MelConvolutionStack& MelFsqCodec::stack(LazyStack& lazy, const char* side,
                                              llama::PanelPrecision precision) const {
    std::call_once(lazy.once, [&] { lazy.value = std::make_shared<MelConvolutionStack>(model_, side, precision); });
    return *lazy.value;
}

const MelConvolutionStack& MelFsqCodec::encoder_stack() const {
    return stack(*encoder_stack_, "encoder", llama::PanelPrecision::float32);
}

const MelConvolutionStack& MelFsqCodec::decoder_stack() const {
    return stack(*decoder_stack_, "decoder", decoder_precision_);
}

void MelFsqCodec::set_decoder_precision(llama::PanelPrecision precision) {
    decoder_precision_ = precision;
    decoder_stack_ = std::make_shared<LazyStack>();
}

MelFsqCodec MelFsqCodec::load(const std::filesystem::path& path, const at::Device& device) {
    const std::string where = path.string();
    try {
        const safetensors::File file(path);
        const auto found = file.metadata().find(config_key);
        if (found == file.metadata().end())
            throw std::runtime_error("not a mel-FSQ codec: no \"" + std::string(config_key) + "\" in the metadata");
        const MelCodecConfig config = MelCodecConfig::from_json(found->second, where);
        std::map<std::string, at::Tensor> tensors;
        at::Tensor mean, std_dev;
        for (const auto& info : file.tensors()) {
            if (info.name == "mel_mean")
                mean = read_tensor(file, info);
            else if (info.name == "mel_std")
                std_dev = read_tensor(file, info);
            else
                tensors[info.name] = read_tensor(file, info);
        }
        if (!mean.defined() || !std_dev.defined()) throw std::runtime_error("missing tensor mel_mean or mel_std");
        MelAutoencoder model = MelAutoencoder::from_tensors(config, std::move(tensors));
        model.to(device);
        return MelFsqCodec(std::move(model), mean.to(device), std_dev.to(device));
    } catch (const safetensors::Error& error) {
        throw std::runtime_error(error.what());
    } catch (const std::exception& error) {
        const std::string message = error.what();
        if (message.rfind(where, 0) == 0) throw std::runtime_error(message);
        throw std::runtime_error(where + ": " + message);
    }
}

void MelFsqCodec::save(const std::filesystem::path& path, const std::map<std::string, std::string>& metadata) const {
    safetensors::Writer writer;
    writer.set_metadata(config_key, config().to_json());
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
    auto add = [&](const std::string& name, const at::Tensor& tensor) {
        const at::Tensor cpu = tensor.detach().to(at::kCPU, at::kFloat).contiguous();
        writer.add_f32(name, safetensors::Shape(cpu.sizes().begin(), cpu.sizes().end()), cpu.data_ptr<float>());
    };
    for (const auto& [name, tensor] : model_.tensors()) add(name, tensor);
    add("mel_mean", mel_mean_);
    add("mel_std", mel_std_);
    writer.write(path);
}

at::Tensor MelFsqCodec::normalize(const at::Tensor& log_mel) const {
    return (log_mel - mel_mean_.unsqueeze(-1)) / mel_std_.unsqueeze(-1);
}

at::Tensor MelFsqCodec::denormalize(const at::Tensor& normalized) const {
    return normalized * mel_std_.unsqueeze(-1) + mel_mean_.unsqueeze(-1);
}

at::Tensor MelFsqCodec::encode(const at::Tensor& audio, int threads) const {
    if (audio.dim() != 1) throw std::invalid_argument("audio must be one-dimensional [samples]");
    const at::Tensor mel = normalize(analysis_.log_mel(audio.to(mel_mean_.device(), at::kFloat)));
    if (mel.device().is_cpu()) return quantizer_.codes(encoder_stack().run(mel, threads).unsqueeze(0)).squeeze(0);
    return quantizer_.codes(model_.encode(mel.unsqueeze(0))).squeeze(0);
}

at::Tensor MelFsqCodec::decode_log_mel(const at::Tensor& codes, int threads) const {
    if (codes.dim() != 1) throw std::invalid_argument("codes must be one-dimensional [frames]");
    const at::Tensor values = quantizer_.values(codes.to(mel_mean_.device()).unsqueeze(0));
    if (values.device().is_cpu()) return denormalize(decoder_stack().run(values.squeeze(0), threads));
    return denormalize(model_.decode(values).squeeze(0));
}

at::Tensor MelFsqCodec::vocode(const at::Tensor& log_mel, const GriffinLimOptions& options) const {
    const MelCodecConfig& c = config();
    return griffin_lim(analysis_.magnitude_from_log_mel(log_mel), analysis_.window(),
                       StftShape{c.n_fft, c.hop_length, c.win_length}, options);
}

}  // namespace cadenza::mel_fsq
