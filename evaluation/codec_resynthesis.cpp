#include "codec_resynthesis.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <chrono>
#include <set>
#include <stdexcept>

#include "corpus_manifest.h"
#include "mel_fsq_codec.h"
#include "resampler.h"
#include "wav_file.h"

namespace cadenza::evaluation {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<float> to_vector(const at::Tensor& tensor) {
    const at::Tensor t = tensor.to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

// `limit` utterances spread evenly over the split, in manifest order.
std::vector<speech_corpus::Utterance> choose(const std::vector<speech_corpus::Utterance>& all, int64_t limit) {
    if (limit <= 0 || static_cast<int64_t>(all.size()) <= limit) return all;
    std::vector<speech_corpus::Utterance> chosen;
    for (int64_t i = 0; i < limit; ++i) chosen.push_back(all[static_cast<size_t>(i * static_cast<int64_t>(all.size()) / limit)]);
    return chosen;
}

}  // namespace

CodecResynthesisReport evaluate_codec_resynthesis(const CodecResynthesisOptions& options) {
    auto say = [&](const std::string& line) {
        if (options.progress) options.progress(line);
    };
    const auto utterances =
        choose(speech_corpus::select_split(speech_corpus::read_corpus_manifest(options.manifest.string()), options.split),
               options.limit);
    if (utterances.empty())
        throw std::runtime_error(options.manifest.string() + ": the " + options.split + " split is empty");

    const int previous_threads = at::get_num_threads();
    at::set_num_threads(1);  // the speed gate is for one core
    c10::InferenceMode inference;
    const auto codec = mel_fsq::MelFsqCodec::load(options.model);
    const int rate = static_cast<int>(codec.config().sample_rate);
    mel_fsq::GriffinLimOptions vocoder;
    vocoder.iterations = options.griffin_lim_iterations;
    vocoder.power = options.griffin_lim_power;
    if (!options.write_audio.empty()) std::filesystem::create_directories(options.write_audio);

    CodecResynthesisReport report;
    report.codebook_size = codec.config().codebook_size();
    std::set<int64_t> used;
    std::vector<recognition::ScoringItem> original, mel_vocoded, resynthesized;
    for (size_t i = 0; i < utterances.size(); ++i) {
        const auto& u = utterances[i];
        audio::Waveform wave = audio::read_waveform(u.path);
        if (wave.sample_rate != rate) wave.samples = audio::resample(wave.samples, wave.sample_rate, rate);
        const at::Tensor audio = at::tensor(wave.samples, at::kFloat);
        report.audio_seconds += static_cast<double>(wave.samples.size()) / rate;

        auto start = Clock::now();
        const at::Tensor codes = codec.encode(audio);
        report.encode_seconds += since(start);
        start = Clock::now();
        const at::Tensor log_mel = codec.decode_log_mel(codes);
        const auto vocoder_start = Clock::now();
        std::vector<float> resynthesis = to_vector(codec.vocode(log_mel, vocoder));
        report.vocoder_seconds += since(vocoder_start);
        report.decode_seconds += since(start);
        const at::Tensor flat = codes.contiguous();
        for (int64_t k = 0; k < flat.numel(); ++k) used.insert(flat.data_ptr<int64_t>()[k]);

        std::vector<float> vocoded = to_vector(codec.vocode(codec.analysis().log_mel(audio), vocoder));
        if (!options.write_audio.empty())
            audio::write_waveform((options.write_audio / (u.id + ".wav")).string(), audio::Waveform{resynthesis, rate});
        original.push_back(recognition::ScoringItem::from_samples(u.id, wave.samples, rate, u.text, u.voice));
        mel_vocoded.push_back(recognition::ScoringItem::from_samples(u.id, std::move(vocoded), rate, u.text, u.voice));
        resynthesized.push_back(recognition::ScoringItem::from_samples(u.id, std::move(resynthesis), rate, u.text, u.voice));
        if ((i + 1) % 20 == 0 || i + 1 == utterances.size())
            say("coded " + std::to_string(i + 1) + "/" + std::to_string(utterances.size()) + " utterances");
    }
    report.distinct_codes = static_cast<int64_t>(used.size());
    at::set_num_threads(previous_threads);

    recognition::TranscriptionOptions recognition_options;
    recognition_options.jobs = options.jobs;
    say("recognizing the original audio");
    report.original = recognition::transcribe_and_score(original, recognition_options);
    say("recognizing the original log-mel through the vocoder");
    report.mel_vocoded = recognition::transcribe_and_score(mel_vocoded, recognition_options);
    say("recognizing the codec's resynthesis");
    report.resynthesized = recognition::transcribe_and_score(resynthesized, recognition_options);
    return report;
}

}  // namespace cadenza::evaluation
