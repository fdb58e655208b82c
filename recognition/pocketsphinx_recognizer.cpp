#include "pocketsphinx_recognizer.h"

#include <pocketsphinx.h>
#include <sphinxbase/err.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "decoder_settings.h"
#include "resampler.h"

namespace cadenza::recognition {
namespace {

// pocketsphinx logs everything (its whole configuration, per-utterance
// statistics) through one process-wide callback. It is replaced once by one
// that keeps only the errors of the calling thread, so that a failure can be
// reported in the exception. `-logfn` is not used: it reopens a global FILE on
// every decoder creation, which races when threads create decoders.
thread_local std::string recent_errors;

void keep_errors(void*, err_lvl_t level, const char* format, ...) {
    if (level != ERR_ERROR && level != ERR_FATAL) return;
    char message[1024];
    va_list arguments;
    va_start(arguments, format);
    std::vsnprintf(message, sizeof(message), format, arguments);
    va_end(arguments);
    std::string line = message;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    if (recent_errors.size() > 4096) return;
    recent_errors += (recent_errors.empty() ? "" : "; ") + line;
}

void silence_pocketsphinx_logging() {
    static std::once_flag once;
    std::call_once(once, [] {
        err_set_logfp(nullptr);  // also stops ps_init printing its configuration
        err_set_callback(keep_errors, nullptr);
    });
}

std::string with_recent_errors(const std::string& message) {
    return recent_errors.empty() ? message : message + " (pocketsphinx: " + recent_errors + ")";
}

// Checked before pocketsphinx sees them: it ends the process on a missing
// mixture-weights file, and its own messages do not say what to do.
void require_file(const std::string& path, const std::string& what) {
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) return;
    std::string message = path + ": " + what + " not found";
    if (path.rfind("/usr/share/pocketsphinx/", 0) == 0)
        message += "; install the Debian package pocketsphinx-en-us (apt-get install pocketsphinx-en-us)";
    throw std::runtime_error(message);
}

void require_model(const RecognizerSettings& settings) {
    const std::filesystem::path directory = settings.model_directory;
    const std::string what = "pocketsphinx acoustic model file (of the model directory " + directory.string() + ")";
    for (const char* file : {"mdef", "means", "variances", "transition_matrices"})
        require_file((directory / file).string(), what);
    // The mixture weights, in either form; without them ps_init calls exit().
    std::error_code error;
    if (!std::filesystem::is_regular_file(directory / "mixture_weights", error))
        require_file((directory / "sendump").string(), what);
    require_file(settings.dictionary, "pocketsphinx pronunciation dictionary");
    require_file(settings.language_model, "pocketsphinx language model");
}

}  // namespace

struct PocketsphinxRecognizer::Decoder {
    ps_decoder_t* decoder = nullptr;
    ~Decoder() {
        if (decoder) ps_free(decoder);
    }
};

PocketsphinxRecognizer::PocketsphinxRecognizer(const RecognizerSettings& settings) : decoder_(std::make_unique<Decoder>()) {
    silence_pocketsphinx_logging();
    require_model(settings);

    std::vector<DecoderSetting> arguments = {{"-hmm", settings.model_directory},
                                             {"-dict", settings.dictionary},
                                             {"-lm", settings.language_model}};
    for (const auto& [name, value] : settings.decoder_settings) {
        try {
            check_decoder_setting(name, value);
        } catch (const std::invalid_argument& error) {
            throw std::runtime_error(error.what());
        }
    }
    arguments.insert(arguments.end(), settings.decoder_settings.begin(), settings.decoder_settings.end());
    std::vector<char*> argv;
    for (auto& [name, value] : arguments) {
        argv.push_back(name.data());
        argv.push_back(value.data());
    }

    recent_errors.clear();
    cmd_ln_t* config = cmd_ln_parse_r(nullptr, ps_args(), static_cast<int32>(argv.size()), argv.data(), TRUE);
    if (!config) {
        std::string listed;
        for (const auto& [name, value] : arguments) listed += " " + name + " " + value;
        throw std::runtime_error(with_recent_errors("pocketsphinx rejected the decoder settings:" + listed));
    }
    decoder_->decoder = ps_init(config);
    cmd_ln_free_r(config);  // the decoder keeps its own reference
    if (!decoder_->decoder)
        throw std::runtime_error(with_recent_errors(settings.model_directory + ": pocketsphinx could not load the model"));
}

PocketsphinxRecognizer::~PocketsphinxRecognizer() = default;

std::string PocketsphinxRecognizer::transcribe(const std::vector<float>& samples, int sample_rate) {
    if (sample_rate <= 0) throw std::invalid_argument("transcribe: the sample rate must be positive");
    const std::vector<short> pcm =
        sample_rate == model_sample_rate ? to_pcm16(samples)
                                         : to_pcm16(audio::resample(samples, sample_rate, model_sample_rate));
    if (pcm.empty()) return {};

    ps_decoder_t* ps = decoder_->decoder;
    recent_errors.clear();
    // A new stream per utterance resets the noise estimate, so that a result
    // never depends on what this decoder heard before.
    if (ps_start_stream(ps) < 0 || ps_start_utt(ps) < 0)
        throw std::runtime_error(with_recent_errors("pocketsphinx could not start an utterance"));
    // The whole utterance in one call: the model normalizes cepstra over the
    // whole utterance (-cmn batch).
    const int processed = ps_process_raw(ps, pcm.data(), pcm.size(), FALSE, TRUE);
    const int ended = ps_end_utt(ps);
    if (processed < 0 || ended < 0) throw std::runtime_error(with_recent_errors("pocketsphinx could not decode the audio"));
    int32 score = 0;
    const char* hypothesis = ps_get_hyp(ps, &score);
    return hypothesis ? std::string(hypothesis) : std::string();
}

std::vector<short> to_pcm16(const std::vector<float>& samples) {
    std::vector<short> pcm(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
        const float scaled = std::nearbyint(samples[i] * 32767.0f);
        if (std::isnan(scaled)) continue;  // stays 0
        pcm[i] = static_cast<short>(scaled >= 32767.0f ? 32767.0f : scaled <= -32768.0f ? -32768.0f : scaled);
    }
    return pcm;
}

}  // namespace cadenza::recognition
