// The configuration of a mel-FSQ codec: the log-mel analysis, the finite
// scalar quantizer and the convolutional autoencoder between them. Stored as
// JSON in the model file's metadata (key "cadenza.mel_fsq.config").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cadenza::mel_fsq {

struct MelCodecConfig {
    int64_t sample_rate = 16000;
    int64_t n_fft = 1024;
    int64_t hop_length = 320;  // 50 frames per second at 16 kHz
    int64_t win_length = 1024;
    int64_t n_mels = 80;
    double f_min = 0.0;
    double f_max = 8000.0;
    double log_floor = 1e-5;   // log(max(mel, floor))

    std::vector<int64_t> levels{8, 8, 8, 4, 4};  // FSQ levels: 8,192 codes
    int64_t width = 256;
    int64_t kernel_size = 5;
    int64_t encoder_blocks = 4;
    int64_t decoder_blocks = 6;

    double frame_rate() const { return static_cast<double>(sample_rate) / static_cast<double>(hop_length); }
    int64_t codebook_size() const;
    int64_t latent_dim() const { return static_cast<int64_t>(levels.size()); }
    // Frames of context on each side that one decoded frame depends on.
    int64_t decoder_context() const { return (kernel_size / 2) * (2 + 2 * decoder_blocks); }

    // Throws std::invalid_argument naming the field.
    void validate() const;
    std::string to_json() const;
    // Unknown keys are errors; missing keys keep their defaults.
    static MelCodecConfig from_json(const std::string& text, const std::string& where);
};

}  // namespace cadenza::mel_fsq
