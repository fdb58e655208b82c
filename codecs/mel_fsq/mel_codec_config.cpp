#include "mel_codec_config.h"

#include <cmath>
#include <set>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "strict_json.h"

namespace cadenza::mel_fsq {

int64_t MelCodecConfig::codebook_size() const {
    int64_t size = 1;
    for (int64_t level : levels) size *= level;
    return size;
}

void MelCodecConfig::validate() const {
    auto require = [](bool ok, const std::string& message) {
        if (!ok) throw std::invalid_argument(message);
    };
    // Bounds far above any mel codec, so that no size below overflows or
    // allocates without limit.
    require(sample_rate >= 1000 && sample_rate <= 768000, "sample_rate must be in [1000, 768000]");
    require(n_fft >= 16 && n_fft <= 65536 && (n_fft & (n_fft - 1)) == 0, "n_fft must be a power of two in [16, 65536]");
    require(hop_length > 0 && hop_length <= win_length, "hop_length must be in [1, win_length]");
    require(win_length > 0 && win_length <= n_fft, "win_length must be in [1, n_fft]");
    require(n_mels >= 1 && n_mels <= n_fft / 2 + 1, "n_mels must be in [1, n_fft / 2 + 1]");
    require(f_min >= 0.0 && f_max > f_min && f_max <= sample_rate / 2.0, "need 0 <= f_min < f_max <= sample_rate / 2");
    require(log_floor > 0.0 && std::isfinite(log_floor), "log_floor must be positive and finite");
    require(!levels.empty() && levels.size() <= 8, "levels must hold 1 to 8 values");
    for (int64_t level : levels) require(level >= 2 && level <= 64, "every FSQ level must be in [2, 64]");
    require(codebook_size() <= (int64_t{1} << 24), "the FSQ codebook (product of levels) must be at most 2^24");
    require(width >= 8 && width <= 4096, "width must be in [8, 4096]");
    require(kernel_size >= 1 && kernel_size <= 255 && kernel_size % 2 == 1, "kernel_size must be odd, at most 255");
    require(encoder_blocks >= 0 && encoder_blocks <= 64, "encoder_blocks must be in [0, 64]");
    require(decoder_blocks >= 0 && decoder_blocks <= 64, "decoder_blocks must be in [0, 64]");
}

std::string MelCodecConfig::to_json() const {
    nlohmann::ordered_json j;
    j["sample_rate"] = sample_rate;
    j["n_fft"] = n_fft;
    j["hop_length"] = hop_length;
    j["win_length"] = win_length;
    j["n_mels"] = n_mels;
    j["f_min"] = f_min;
    j["f_max"] = f_max;
    j["log_floor"] = log_floor;
    j["levels"] = levels;
    j["width"] = width;
    j["kernel_size"] = kernel_size;
    j["encoder_blocks"] = encoder_blocks;
    j["decoder_blocks"] = decoder_blocks;
    return j.dump();
}

MelCodecConfig MelCodecConfig::from_json(const std::string& text, const std::string& where) {
    MelCodecConfig config;
    nlohmann::json j;
    try {
        j = json_format::parse_strict_json(text, where + ": the codec config");
    } catch (const json_format::StrictJsonError& error) {
        throw std::invalid_argument(error.what());
    }
    if (!j.is_object()) throw std::invalid_argument(where + ": the codec config must be a JSON object");
    const std::set<std::string> known{"sample_rate", "n_fft",  "hop_length", "win_length",  "n_mels",
                                      "f_min",       "f_max",  "log_floor",  "levels",      "width",
                                      "kernel_size", "encoder_blocks",       "decoder_blocks"};
    for (const auto& item : j.items())
        if (!known.count(item.key())) throw std::invalid_argument(where + ": unknown codec config key '" + item.key() + "'");
    try {
        // Whole numbers must be JSON integers: nlohmann converts 256.5 to 256,
        // and a double beyond int64 to whatever the conversion gives
        // (undefined behaviour; fuzz_mel_codec_config found it).
        auto read = [&](const char* key, auto& value) {
            if (!j.contains(key)) return;
            const nlohmann::json& field = j.at(key);
            using Value = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<Value, int64_t>) {
                if (!field.is_number_integer()) throw std::invalid_argument(where + ": codec config: '" + key + "' must be a whole number");
            } else if constexpr (std::is_same_v<Value, std::vector<int64_t>>) {
                if (!field.is_array()) throw std::invalid_argument(where + ": codec config: '" + key + "' must be an array");
                for (const auto& element : field)
                    if (!element.is_number_integer())
                        throw std::invalid_argument(where + ": codec config: '" + key + "' must hold whole numbers");
            } else {
                if (!field.is_number()) throw std::invalid_argument(where + ": codec config: '" + key + "' must be a number");
            }
            field.get_to(value);
        };
        read("sample_rate", config.sample_rate);
        read("n_fft", config.n_fft);
        read("hop_length", config.hop_length);
        read("win_length", config.win_length);
        read("n_mels", config.n_mels);
        read("f_min", config.f_min);
        read("f_max", config.f_max);
        read("log_floor", config.log_floor);
        read("levels", config.levels);
        read("width", config.width);
        read("kernel_size", config.kernel_size);
        read("encoder_blocks", config.encoder_blocks);
        read("decoder_blocks", config.decoder_blocks);
    } catch (const nlohmann::json::exception& error) {
        throw std::invalid_argument(where + ": codec config: " + error.what());
    }
    try {
        config.validate();
    } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(where + ": codec config: " + error.what());
    }
    return config;
}

}  // namespace cadenza::mel_fsq
