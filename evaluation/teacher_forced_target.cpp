#include "teacher_forced_target.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <fstream>
#include <map>
#include <sstream>

#include "corpus_manifest.h"
#include "error.h"
#include "llama_model.h"
#include "mel_fsq_codec.h"
#include "model_directory.h"
#include "resampler.h"
#include "speech_token_corpus.h"
#include "token_corpus.h"
#include "wav_file.h"

namespace cadenza::evaluation {
namespace {

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw Error(CDZ_STATUS_NOT_FOUND, path.string() + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Utterance ids of a prompts file's rows, in order (after its header).
std::vector<std::string> utterance_ids(const std::filesystem::path& prompts) {
    std::istringstream in(read_text(prompts));
    std::string line;
    std::vector<std::string> ids;
    if (!std::getline(in, line) || line.rfind("id\t", 0) != 0)
        throw Error(CDZ_STATUS_INVALID_CONFIG, prompts.string() + ":1: expected the header 'id<TAB>prompt_id...'");
    while (std::getline(in, line)) ids.push_back(speech_corpus::split_tab_fields(line).at(0));
    return ids;
}

std::vector<float> to_vector(const at::Tensor& tensor) {
    const at::Tensor t = tensor.to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

}  // namespace

TeacherForcedReport evaluate_teacher_forced(const TeacherForcedOptions& options) {
    auto say = [&](const std::string& line) {
        if (options.progress) options.progress(line);
    };
    const training::TokenCorpus corpus = training::load_token_corpus(options.tokens);
    const std::vector<std::string> ids = utterance_ids(options.prompts);
    if (ids.size() != corpus.sequences.size())
        throw Error(CDZ_STATUS_INVALID_CONFIG, options.prompts.string() + ": " + std::to_string(ids.size()) +
                                                   " rows, but " + options.tokens.string() + " has " +
                                                   std::to_string(corpus.sequences.size()) + " lines");
    const auto layout = training::SpeechTokenLayout::from_json(read_text(options.layout), options.layout.string());
    std::map<std::string, speech_corpus::Utterance> utterances;
    for (auto& u : speech_corpus::read_corpus_manifest(options.manifest.string())) utterances[u.id] = std::move(u);

    const int previous_threads = at::get_num_threads();
    at::set_num_threads(std::max(1, options.threads));
    c10::InferenceMode inference;
    llama::LlamaWeights weights = training::load_model_directory(options.target);
    if (weights.config.vocab_size != layout.vocab_size())
        throw Error(CDZ_STATUS_INVALID_CONFIG, options.layout.string() + ": a vocabulary of " +
                                                   std::to_string(layout.vocab_size()) + " tokens, the target has " +
                                                   std::to_string(weights.config.vocab_size));
    const int64_t max_positions = weights.config.max_position_embeddings;
    const llama::LlamaModel model(std::move(weights), max_positions);
    const auto codec = mel_fsq::MelFsqCodec::load(options.codec);
    if (codec.config().codebook_size() != layout.audio_token_count)
        throw Error(CDZ_STATUS_INVALID_CONFIG, options.codec.string() + ": " +
                                                   std::to_string(codec.config().codebook_size()) + " codes, the layout has " +
                                                   std::to_string(layout.audio_token_count));
    const int rate = static_cast<int>(codec.config().sample_rate);
    const mel_fsq::GriffinLimOptions vocoder;
    if (!options.write_audio.empty()) std::filesystem::create_directories(options.write_audio);

    const auto count = options.limit > 0 ? std::min<size_t>(options.limit, corpus.sequences.size()) : corpus.sequences.size();
    TeacherForcedReport report;
    std::vector<recognition::ScoringItem> original, true_items, predicted_items;
    for (size_t k = 0; k < count; ++k) {
        const training::TokenSequence& s = corpus.sequences[k];
        const std::string where = options.tokens.string() + ":" + std::to_string(s.line);
        const auto found = utterances.find(ids[k]);
        if (found == utterances.end())
            throw Error(CDZ_STATUS_INVALID_CONFIG, options.manifest.string() + ": no utterance '" + ids[k] + "' (" + where + ")");
        const speech_corpus::Utterance& u = found->second;
        // The target: codes (and phone markers) then the end token; a token is predicted one position before.
        const int64_t codes_begin = s.prompt_length;
        const int64_t codes_end = static_cast<int64_t>(s.tokens.size()) - 1;
        if (codes_end <= codes_begin || s.tokens.back() != layout.end_token || codes_begin < 1 ||
            static_cast<int64_t>(s.tokens.size()) > max_positions)
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": not [prompt] | [codes][end] within " +
                                                       std::to_string(max_positions) + " positions");
        const at::Tensor tokens = at::tensor(std::vector<int64_t>(s.tokens.begin(), s.tokens.end()), at::kLong);
        // The frames: every target position but the phone markers (text ids), if the layout has them.
        std::vector<int64_t> frame_positions;
        for (int64_t t = codes_begin; t < codes_end; ++t) {
            const int64_t id = s.tokens[static_cast<size_t>(t)];
            const bool marker = layout.phone_markers && id >= layout.text_token_offset &&
                                id < layout.text_token_offset + layout.text_token_count;
            if (!marker) frame_positions.push_back(t);
        }
        if (frame_positions.empty()) throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": no codes in the target");
        const at::Tensor positions = at::tensor(frame_positions, at::kLong);
        const at::Tensor truth_tokens = tokens.index_select(0, positions);
        const at::Tensor truth = truth_tokens - layout.audio_token_offset;
        if (truth.min().item<int64_t>() < 0 || truth.max().item<int64_t>() >= layout.audio_token_count)
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": a target token outside the codes");
        const at::Tensor logits = model.logits(model.forward_sequence(tokens.unsqueeze(0))).squeeze(0);
        const at::Tensor frame_logits = logits.index_select(0, positions - 1);  // [frames, vocab]
        report.cross_entropy -=
            at::log_softmax(frame_logits, -1).gather(1, truth_tokens.unsqueeze(1)).sum().item<double>();
        const at::Tensor predicted =
            frame_logits.slice(1, layout.audio_token_offset, layout.audio_token_offset + layout.audio_token_count)
                .argmax(-1);
        report.accuracy += predicted.eq(truth).sum().item<double>();
        // FSQ latents [dims, frames], each dimension in [-1, 1].
        const at::Tensor truth_latents = codec.quantizer().values(truth.unsqueeze(0)).squeeze(0);
        report.latent_distance +=
            (codec.quantizer().values(predicted.unsqueeze(0)).squeeze(0) - truth_latents).abs().sum().item<double>();
        if (truth.size(0) > 1)
            report.previous_code_distance +=
                (truth_latents.slice(1, 1) - truth_latents.slice(1, 0, -1)).abs().sum().item<double>();
        report.frames += truth.size(0);

        std::vector<float> true_audio = to_vector(codec.decode(truth, vocoder));
        std::vector<float> predicted_audio = to_vector(codec.decode(predicted, vocoder));
        if (!options.write_audio.empty()) {
            audio::write_waveform((options.write_audio / (u.id + ".true.wav")).string(), audio::Waveform{true_audio, rate});
            audio::write_waveform((options.write_audio / (u.id + ".predicted.wav")).string(),
                                  audio::Waveform{predicted_audio, rate});
        }
        audio::Waveform wave = audio::read_waveform(u.path);
        original.push_back(recognition::ScoringItem::from_samples(u.id, std::move(wave.samples), wave.sample_rate, u.text));
        true_items.push_back(recognition::ScoringItem::from_samples(u.id, std::move(true_audio), rate, u.text));
        predicted_items.push_back(recognition::ScoringItem::from_samples(u.id, std::move(predicted_audio), rate, u.text));
        if ((k + 1) % 10 == 0 || k + 1 == count) say("scored " + std::to_string(k + 1) + "/" + std::to_string(count) + " sequences");
    }
    at::set_num_threads(previous_threads);
    const auto frames = static_cast<double>(std::max<int64_t>(report.frames, 1));
    report.cross_entropy /= frames;
    report.accuracy /= frames;
    report.latent_distance /= frames;
    report.previous_code_distance /= std::max(1.0, frames - static_cast<double>(count));

    recognition::TranscriptionOptions recognition_options;
    recognition_options.jobs = options.jobs;
    say("recognizing the original audio");
    report.original = recognition::transcribe_and_score(original, recognition_options);
    say("recognizing the true codes through the codec");
    report.true_codes = recognition::transcribe_and_score(true_items, recognition_options);
    say("recognizing the target's teacher-forced codes through the codec");
    report.predicted_codes = recognition::transcribe_and_score(predicted_items, recognition_options);
    return report;
}

}  // namespace cadenza::evaluation
