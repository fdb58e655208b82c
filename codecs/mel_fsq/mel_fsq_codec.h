// The mel-FSQ codec as one object: audio -> log-mel -> encoder -> FSQ codes,
// and codes -> decoder -> log-mel -> Griffin-Lim -> audio.
//
// Model file (safetensors): the autoencoder's tensors (mel_autoencoder.h),
// `mel_mean` and `mel_std` [n_mels] (per-bin normalization of the log-mel,
// measured on the training audio), and metadata "cadenza.mel_fsq.config" (the
// JSON of MelCodecConfig) plus free-form provenance.
#pragma once

#include <ATen/ATen.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "finite_scalar_quantizer.h"
#include "griffin_lim.h"
#include "mel_autoencoder.h"
#include "mel_codec_config.h"
#include "mel_spectrogram.h"
#include "panel_weights.h"

namespace cadenza::mel_fsq {

class MelConvolutionStack;

class MelFsqCodec {
public:
    MelFsqCodec(MelAutoencoder model, at::Tensor mel_mean, at::Tensor mel_std);

    // Throws std::runtime_error naming the file and the problem.
    static MelFsqCodec load(const std::filesystem::path& path, const at::Device& device = at::kCPU);
    void save(const std::filesystem::path& path, const std::map<std::string, std::string>& metadata = {}) const;

    const MelCodecConfig& config() const { return model_.config(); }
    const MelAutoencoder& model() const { return model_; }
    const MelSpectrogram& analysis() const { return analysis_; }
    const FiniteScalarQuantizer& quantizer() const { return quantizer_; }
    const at::Tensor& mel_mean() const { return mel_mean_; }
    const at::Tensor& mel_std() const { return mel_std_; }

    // float32 audio [samples] at config().sample_rate -> int64 codes [frames].
    // `threads`: for the convolutions on the CPU (MelConvolutionStack::run).
    at::Tensor encode(const at::Tensor& audio, int threads = 1) const;
    // int64 codes [frames] -> log-mel [n_mels, frames]
    at::Tensor decode_log_mel(const at::Tensor& codes, int threads = 1) const;
    // log-mel [n_mels, frames] -> float32 audio [(frames - 1) * hop_length]
    at::Tensor vocode(const at::Tensor& log_mel, const GriffinLimOptions& options) const;
    at::Tensor decode(const at::Tensor& codes, const GriffinLimOptions& options, int threads = 1) const {
        return vocode(decode_log_mel(codes, threads), options);
    }

    at::Tensor normalize(const at::Tensor& log_mel) const;    // per bin, [.., n_mels, frames]
    at::Tensor denormalize(const at::Tensor& normalized) const;

    // The encoder's and the decoder's convolutions on raw rows (encode,
    // decode_log_mel and the streamed IncrementalMelDecoder on the CPU),
    // arranged on first use and shared by every copy of this codec: weights
    // as they were then (training changes the model's tensors and calls the
    // model itself, not these).
    const MelConvolutionStack& encoder_stack() const;
    const MelConvolutionStack& decoder_stack() const;
    // How the decoder's stack stores its weights (MelConvolutionStack; float32
    // unless set): this codec, and copies made of it from now on, get a
    // stack of their own, arranged on first use.
    void set_decoder_precision(llama::PanelPrecision precision);

private:
    struct LazyStack {
        std::once_flag once;
        std::shared_ptr<const MelConvolutionStack> value;  // shared_ptr: its type stays incomplete here
    };
    const MelConvolutionStack& stack(LazyStack& lazy, const char* side, llama::PanelPrecision precision) const;

    MelAutoencoder model_;
    MelSpectrogram analysis_;
    FiniteScalarQuantizer quantizer_;
    at::Tensor mel_mean_, mel_std_;
    std::shared_ptr<LazyStack> encoder_stack_ = std::make_shared<LazyStack>();
    std::shared_ptr<LazyStack> decoder_stack_ = std::make_shared<LazyStack>();
    llama::PanelPrecision decoder_precision_ = llama::PanelPrecision::float32;
};

}  // namespace cadenza::mel_fsq
