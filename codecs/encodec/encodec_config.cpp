#include "encodec_config.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "json_fields.h"

namespace cadenza::encodec {

using seanet::json_bool;
using seanet::json_int;
using seanet::json_number;
using seanet::json_number_list;
using seanet::json_string;

namespace {

// The arguments the reference factories pass (EncodecModel._get_model);
// everything else keeps the reference classes' defaults.
nlohmann::json official_arguments(const std::string& name) {
    if (name == "encodec_24khz")
        return {{"name", name}, {"sample_rate", 24000}, {"channels", 1}, {"causal", true}, {"norm", "weight_norm"},
                {"target_bandwidths", {1.5, 3.0, 6.0, 12.0, 24.0}}, {"normalize", false}, {"segment", nullptr}};
    if (name == "encodec_48khz")
        return {{"name", name}, {"sample_rate", 48000}, {"channels", 2}, {"causal", false}, {"norm", "time_group_norm"},
                {"target_bandwidths", {3.0, 6.0, 12.0, 24.0}}, {"normalize", true}, {"segment", 1.0}};
    std::string names;
    for (const std::string& known : EncodecConfig::official_names()) names += (names.empty() ? "" : ", ") + known;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "unknown official EnCodec model '" + name + "' (" + names + ")");
}

// Python's float floor division, as the factory's n_q formula uses it.
double python_floordiv(double a, double b) {
    const double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    double floor_div = std::floor(div);
    if (div - floor_div > 0.5) floor_div += 1.0;
    return floor_div;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Keys of the golden files that describe rather than configure.
const std::set<std::string> informational_keys = {"reference", "note", "seed", "signal", "bandwidths_in_vectors",
                                                  "n_q_per_bandwidth"};
// SEANet arguments that may stand at the top level, for encoder and decoder both.
const std::set<std::string> shared_seanet_keys = {
    "channels", "dimension", "n_filters", "n_residual_layers", "ratios", "activation", "activation_params", "norm",
    "norm_params", "kernel_size", "last_kernel_size", "residual_kernel_size", "dilation_base", "causal", "pad_mode",
    "true_skip", "compress", "lstm"};

class ConfigBuilder {
public:
    EncodecConfig config;

    void apply(const nlohmann::json& json, const std::string& where) {
        if (!json.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + " must be a JSON object");
        nlohmann::json shared = nlohmann::json::object();
        for (const auto& [key, value] : json.items()) {
            const std::string at = where + "." + key;
            if (key == "base" || informational_keys.count(key)) continue;
            if (key == "hop_length") stated_hop_ = json_int(value, at);
            else if (key == "frame_rate") stated_frame_rate_ = json_number(value, at);
            else if (shared_seanet_keys.count(key)) shared[key] = value;
            else if (key == "bins") config.quantizer.bins = json_int(value, at);
            else if (key == "n_q") set_n_q(json_int(value, at));
            else if (!apply_model_argument(key, value, at) && key != "encoder" && key != "decoder" &&
                     key != "quantizer" && key != "model")
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": unknown key '" + key + "'");
        }
        if (!shared.empty()) {
            seanet::apply_seanet_arguments(config.encoder, shared, false, where);
            seanet::apply_seanet_arguments(config.decoder, shared, true, where);
            if (shared.contains("channels")) config.channels = json_int(shared["channels"], where + ".channels");
            if (shared.contains("dimension"))
                config.quantizer.dimension = json_int(shared["dimension"], where + ".dimension");
        }
        // The exact constructor arguments, which take precedence over the summary.
        if (json.contains("encoder"))
            seanet::apply_seanet_arguments(config.encoder, json["encoder"], false, where + ".encoder");
        if (json.contains("decoder"))
            seanet::apply_seanet_arguments(config.decoder, json["decoder"], true, where + ".decoder");
        if (json.contains("quantizer")) apply_quantizer(json["quantizer"], where + ".quantizer");
        if (json.contains("model")) {
            const nlohmann::json& model = json["model"];
            if (!model.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ".model must be an object");
            for (const auto& [key, value] : model.items())
                if (!apply_model_argument(key, value, where + ".model." + key))
                    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ".model: unknown argument '" + key + "'");
        }
    }

    EncodecConfig finish(const std::string& where) {
        if (config.target_bandwidths.empty())
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": target_bandwidths is missing or empty");
        if (!n_q_given_ && config.sample_rate >= 1) {
            // The factory: n_q = int(1000 * bandwidths[-1] // (ceil(sample_rate / hop) * 10)).
            const int64_t frame_rate = ceil_div(config.sample_rate, std::max<int64_t>(1, config.encoder.hop_length()));
            config.quantizer.n_q = static_cast<int64_t>(
                python_floordiv(1000.0 * config.target_bandwidths.back(), static_cast<double>(frame_rate * 10)));
        }
        config.validate(where);
        if (stated_hop_ && *stated_hop_ != config.hop_length())
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": hop_length " + std::to_string(*stated_hop_) +
                                                       " does not match the ratios' product " +
                                                       std::to_string(config.hop_length()));
        if (stated_frame_rate_ && *stated_frame_rate_ != static_cast<double>(config.frame_rate()))
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": frame_rate does not match ceil(sample_rate / hop) = " +
                                                       std::to_string(config.frame_rate()));
        return config;
    }

private:
    void set_n_q(int64_t n_q) {
        config.quantizer.n_q = n_q;
        n_q_given_ = true;
    }

    bool apply_model_argument(const std::string& key, const nlohmann::json& value, const std::string& at) {
        if (key == "sample_rate") config.sample_rate = json_int(value, at);
        else if (key == "channels") config.channels = json_int(value, at);
        else if (key == "target_bandwidths") config.target_bandwidths = json_number_list(value, at);
        else if (key == "normalize") config.normalize = json_bool(value, at);
        else if (key == "segment") {
            config.segment = value.is_null() ? std::nullopt : std::optional<double>(json_number(value, at));
        } else if (key == "overlap") config.overlap = json_number(value, at);
        else if (key == "name") config.name = json_string(value, at);
        else return false;
        return true;
    }

    void apply_quantizer(const nlohmann::json& quantizer, const std::string& where) {
        if (!quantizer.is_object()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + " must be an object");
        static const std::set<std::string> training_only = {"decay", "kmeans_init", "kmeans_iters",
                                                            "threshold_ema_dead_code"};
        for (const auto& [key, value] : quantizer.items()) {
            const std::string at = where + "." + key;
            if (key == "dimension") config.quantizer.dimension = json_int(value, at);
            else if (key == "n_q") set_n_q(json_int(value, at));
            else if (key == "bins") config.quantizer.bins = json_int(value, at);
            else if (!training_only.count(key))
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": unknown argument '" + key + "'");
        }
    }

    bool n_q_given_ = false;
    std::optional<int64_t> stated_hop_;
    std::optional<double> stated_frame_rate_;
};

}  // namespace

int64_t EncodecConfig::frame_rate() const { return ceil_div(sample_rate, hop_length()); }

int64_t EncodecConfig::codebooks_for_bandwidth(double kbps) const {
    bool known = false;
    std::string choices;
    for (double target : target_bandwidths) {
        known = known || std::fabs(target - kbps) < 1e-9;
        choices += (choices.empty() ? "" : ", ") + nlohmann::json(target).dump();
    }
    if (!known)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "bandwidth " + nlohmann::json(kbps).dump() +
                                                   " kbps is not one of the model's target bandwidths (" + choices + ")");
    // get_num_quantizers_for_bandwidth, then the quantizer's layers[:n_q].
    const double per_codebook = std::log2(static_cast<double>(quantizer.bins)) * static_cast<double>(frame_rate());
    const auto codebooks = static_cast<int64_t>(std::max(1.0, std::floor(kbps * 1000.0 / per_codebook)));
    return std::min(codebooks, quantizer.n_q);
}

std::optional<int64_t> EncodecConfig::segment_length() const {
    if (!segment) return std::nullopt;
    return static_cast<int64_t>(*segment * static_cast<double>(sample_rate));
}

std::optional<int64_t> EncodecConfig::segment_stride() const {
    const auto length = segment_length();
    if (!length) return std::nullopt;
    return std::max<int64_t>(1, static_cast<int64_t>((1.0 - overlap) * static_cast<double>(*length)));
}

std::optional<int64_t> EncodecConfig::segment_frames() const {
    const auto length = segment_length();
    if (!length) return std::nullopt;
    return ceil_div(*length, hop_length());  // each strided convolution rounds its frame count up
}

void EncodecConfig::validate(const std::string& where) const {
    auto require = [&](bool ok, const std::string& message) {
        if (!ok) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": " + message);
    };
    encoder.validate(where + ".encoder");
    decoder.validate(where + ".decoder");
    require(sample_rate >= 1, "sample_rate must be at least 1");
    require(channels == 1 || channels == 2, "channels must be 1 or 2 (the reference's encode asserts it)");
    require(encoder.channels == channels && decoder.channels == channels,
            "encoder, decoder and model must have the same channel count");
    require(encoder.dimension == quantizer.dimension && decoder.dimension == quantizer.dimension,
            "encoder, quantizer and decoder must have the same dimension");
    require(encoder.hop_length() == decoder.hop_length(), "the encoder's and decoder's ratios must give the same hop");
    require(!encoder.bidirectional, "EnCodec's encoder LSTM is unidirectional");
    require(quantizer.n_q >= 1, "n_q must be at least 1");
    require(quantizer.bins >= 2 && (quantizer.bins & (quantizer.bins - 1)) == 0,
            "bins must be a power of 2 (the reference asserts it)");
    require(!target_bandwidths.empty(), "target_bandwidths must not be empty");
    for (double bandwidth : target_bandwidths) require(bandwidth > 0, "every target bandwidth must be positive");
    require(!segment || *segment > 0, "segment must be positive (or null)");
    require(overlap >= 0 && overlap < 1, "overlap must be in [0, 1)");
    require(!segment || *segment_length() >= 1, "segment * sample_rate must be at least one sample");
}

const std::vector<std::string>& EncodecConfig::official_names() {
    static const std::vector<std::string> names = {"encodec_24khz", "encodec_48khz"};
    return names;
}

EncodecConfig EncodecConfig::official(const std::string& name) {
    ConfigBuilder builder;
    builder.apply(official_arguments(name), name);
    return builder.finish(name);
}

EncodecConfig EncodecConfig::from_json(const nlohmann::json& json, const std::string& where) {
    ConfigBuilder builder;
    if (json.is_object() && json.contains("base"))
        builder.apply(official_arguments(json_string(json["base"], where + ".base")), where + ".base");
    builder.apply(json, where);
    return builder.finish(where);
}

EncodecConfig EncodecConfig::from_file(const std::filesystem::path& path) {
    return from_json(seanet::read_json_file(path), path.string());
}

EncodecConfig EncodecConfig::resolve(const std::string& name_or_path, const std::filesystem::path& base_directory) {
    for (const std::string& name : official_names())
        if (name_or_path == name) return official(name);
    std::filesystem::path path(name_or_path);
    if (path.is_relative()) path = base_directory / path;
    if (!std::filesystem::is_regular_file(path))
        throw sdk::Error(CDZ_STATUS_NOT_FOUND, "config '" + name_or_path + "' is neither an official model (" +
                                              official_names()[0] + ", " + official_names()[1] +
                                              ") nor an existing file (looked for " + path.string() + ")");
    return from_file(path);
}

}  // namespace cadenza::encodec
