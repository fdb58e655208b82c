// Everything needed to rebuild an EnCodec model: the reference factory's
// arguments for SEANetEncoder, SEANetDecoder, ResidualVectorQuantizer and
// EncodecModel. Built from an official model name (the reference factories
// encodec_model_24khz / encodec_model_48khz) or from a JSON file; see
// docs/codecs.md for the file's format.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "residual_vector_quantizer.h"
#include "seanet_config.h"

namespace cadenza::encodec {

struct EncodecConfig {
    std::string name = "unset";
    int64_t sample_rate = 24000;
    int64_t channels = 1;
    seanet::SeanetConfig encoder;
    seanet::SeanetConfig decoder;
    seanet::QuantizerConfig quantizer;
    std::vector<double> target_bandwidths;  // kbps
    bool normalize = false;                 // scale each segment to unit RMS before encoding
    std::optional<double> segment;          // seconds per segment; none: the whole input at once
    double overlap = 0.01;                  // fraction of a segment shared with the next

    int64_t hop_length() const { return encoder.hop_length(); }
    // The reference's integer frame rate, ceil(sample_rate / hop), which sets
    // the bandwidth of one codebook.
    int64_t frame_rate() const;
    // Codebooks used at `kbps`, one of target_bandwidths; throws otherwise.
    int64_t codebooks_for_bandwidth(double kbps) const;
    std::optional<int64_t> segment_length() const;  // samples
    std::optional<int64_t> segment_stride() const;  // samples between segment starts
    // Frames a full segment encodes to; the frames of successive segments
    // are concatenated at the C ABI.
    std::optional<int64_t> segment_frames() const;

    // Throws cadenza::sdk::Error naming `where` when the parts do not fit together.
    void validate(const std::string& where) const;

    static const std::vector<std::string>& official_names();  // encodec_24khz, encodec_48khz
    static EncodecConfig official(const std::string& name);
    static EncodecConfig from_json(const nlohmann::json& json, const std::string& where);
    static EncodecConfig from_file(const std::filesystem::path& path);
    // An official name, or the path of a JSON file (relative paths start at
    // base_directory).
    static EncodecConfig resolve(const std::string& name_or_path, const std::filesystem::path& base_directory);
};

}  // namespace cadenza::encodec
