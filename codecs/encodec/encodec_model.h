// EnCodec as the reference's EncodecModel computes it: audio is cut into
// segments (or taken whole), each optionally normalised to unit RMS,
// encoded by the SEANet encoder and quantized with as many codebooks as the
// bandwidth allows; decoding sums the codebook vectors, runs the SEANet
// decoder, rescales and overlap-adds the segments.
#pragma once

#include <filesystem>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "encodec_config.h"
#include "parameter_source.h"
#include "residual_vector_quantizer.h"
#include "seanet_decoder.h"
#include "seanet_encoder.h"

namespace cadenza::encodec {

struct EncodedSegment {
    at::Tensor codes;  // int64 [batch, codebooks, frames]
    at::Tensor scale;  // [batch, 1]; undefined when the model does not normalize
};

class EncodecModel {
public:
    // Takes "encoder.*", "quantizer.*" and "decoder.*" from `source`.
    EncodecModel(const EncodecConfig& config, seanet::ParameterSource& source);
    // Reads a checkpoint; every key must be used with the config's shape.
    static EncodecModel load(const EncodecConfig& config, const std::filesystem::path& checkpoint, c10::Device device);

    // [batch, channels, samples] -> one entry per segment (the reference's
    // encode after set_target_bandwidth(bandwidth)).
    std::vector<EncodedSegment> encode(const at::Tensor& audio, double bandwidth) const;
    // The reference's decode: [batch, channels, samples], untrimmed (each
    // segment decodes to frames * hop samples).
    at::Tensor decode(const std::vector<EncodedSegment>& segments) const;

    // The steps, for tests and the plugin.
    struct Normalized {
        at::Tensor audio;
        at::Tensor scale;  // [batch, 1], undefined when the model does not normalize
    };
    Normalized normalize(const at::Tensor& segment) const;
    at::Tensor embed(const at::Tensor& normalized_segment) const { return encoder_.forward(normalized_segment); }
    at::Tensor decode_segment(const EncodedSegment& segment) const;

    const EncodecConfig& config() const { return config_; }
    const seanet::SeanetDecoder& decoder() const { return decoder_; }
    const seanet::ResidualVectorQuantizer& quantizer() const { return quantizer_; }
    c10::Device device() const { return device_; }

private:
    EncodecConfig config_;
    seanet::SeanetEncoder encoder_;
    seanet::ResidualVectorQuantizer quantizer_;
    seanet::SeanetDecoder decoder_;
    c10::Device device_;
};

// _linear_overlap_add: frames [batch, channels, length_i] starting every
// `stride` samples, blended with triangular weights.
at::Tensor linear_overlap_add(const std::vector<at::Tensor>& frames, int64_t stride);

}  // namespace cadenza::encodec
