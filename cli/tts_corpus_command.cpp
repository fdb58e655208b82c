#include "tts_corpus_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "corpus_manifest.h"
#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "phone_alignment.h"
#include "pipeline_config.h"
#include "progress.h"
#include "speech_token_corpus.h"
#include "wav_file.h"

namespace cadenza::cli {
namespace {

struct TtsCorpusOptions {
    std::string pipeline, manifest, output;
    double prompt_seconds = 3.0;
    uint64_t seed = 1;
    int64_t limit = 0;  // utterances per split; 0: all
    bool phone_markers = false;
    int64_t text_slots = 0;  // 0: the frontend's vocabulary
};

// The utterance's phones as its synthesizer spoke them (the corpus's .phones
// file) become its text, and each phone's id is also placed among its codes
// where the phone begins. The phones are looked up in the pipeline
// frontend's own vocabulary, so that synthesis (which gets them from the
// frontend) and training agree.
class PhoneIds {
public:
    explicit PhoneIds(Engine& engine) : info_(engine.frontend_info()) {
        for (int32_t id = 0; id < info_.vocab_size; ++id) ids_[engine.text_symbol(id)] = id;
    }

    training::EncodedUtterance encode(const speech_corpus::Utterance& u, int64_t frames, double frame_rate) const {
        const std::string path = speech_corpus::phone_alignment_path(u.path);
        const auto segments = speech_corpus::read_phone_alignment(path);
        std::vector<int32_t> ids;
        std::vector<double> ends;
        for (const auto& segment : segments) {
            const auto found = ids_.find(segment.phone);
            if (found == ids_.end())
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, path + ": the phone '" + segment.phone +
                                                             "' is not in the frontend's vocabulary");
            ids.push_back(found->second);
            ends.push_back(segment.end_seconds);
        }
        training::EncodedUtterance e{u.id, u.voice, u.variation, {}, {}, {}};
        if (info_.bos_id >= 0) e.text_ids.push_back(info_.bos_id);
        e.text_ids.insert(e.text_ids.end(), ids.begin(), ids.end());
        if (info_.eos_id >= 0) e.text_ids.push_back(info_.eos_id);
        e.markers = training::place_phone_markers(ids, ends, frames, frame_rate);
        return e;
    }

private:
    cdz_frontend_info info_;
    std::map<std::string, int32_t> ids_;
};

int run_tts_corpus(const TtsCorpusOptions& o) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    Engine engine(load_pipeline_config_file(o.pipeline));
    if (!engine.has_frontend() || !engine.has_codec())
        throw Error(CDZ_STATUS_INVALID_CONFIG, o.pipeline + ": `corpus tts` needs the pipeline's [frontend] and [codec]");
    const cdz_codec_info& codec = engine.codec_info();
    if (codec.codebook_count != 1)
        throw Error(CDZ_STATUS_UNSUPPORTED, o.pipeline + ": `corpus tts` needs a codec with one codebook");
    const int64_t vocab = engine.frontend_info().vocab_size;
    if (o.text_slots > 0 && o.text_slots < vocab)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--text-slots " + std::to_string(o.text_slots) +
                                                     " is smaller than the frontend's vocabulary (" +
                                                     std::to_string(vocab) + ")");
    auto layout = training::SpeechTokenLayout::packed(std::max(vocab, o.text_slots),
                                                      static_cast<int64_t>(codec.codebook_size));
    layout.phone_markers = o.phone_markers;
    layout.text_pad_id = engine.frontend_info().pad_id;  // text dropout's null text, as guidance's at synthesis
    std::unique_ptr<PhoneIds> phone_ids;
    if (o.phone_markers) phone_ids = std::make_unique<PhoneIds>(engine);
    const auto utterances = speech_corpus::read_corpus_manifest(o.manifest);
    std::filesystem::create_directories(o.output);
    const int64_t max_prompt_frames = static_cast<int64_t>(o.prompt_seconds * codec.frame_rate);

    std::ofstream(std::filesystem::path(o.output) / "layout.json") << layout.to_json() << '\n';
    std::map<std::string, std::string> prompts_used;
    for (const std::string split : {"train", "dev", "test"}) {
        auto selected = speech_corpus::select_split(utterances, split);
        if (o.limit > 0 && static_cast<int64_t>(selected.size()) > o.limit) selected.resize(static_cast<size_t>(o.limit));
        std::vector<training::EncodedUtterance> encoded;
        double audio_seconds = 0;
        auto last = Clock::now();
        const auto split_start = Clock::now();
        for (size_t i = 0; i < selected.size(); ++i) {
            const auto& u = selected[i];
            const audio::Waveform wave = audio::read_waveform(u.path);
            audio_seconds += wave.duration_seconds();
            auto codes = engine.encode_audio(wave.samples, wave.sample_rate).values;
            training::EncodedUtterance e =
                phone_ids ? phone_ids->encode(u, static_cast<int64_t>(codes.size()), codec.frame_rate)
                          : training::EncodedUtterance{u.id, u.voice, u.variation, engine.text_ids(u.text), {}, {}};
            e.codes = std::move(codes);
            encoded.push_back(std::move(e));
            if (Clock::now() - last > std::chrono::seconds(2) || i + 1 == selected.size()) {
                const double elapsed = std::chrono::duration<double>(Clock::now() - split_start).count();
                std::fprintf(stderr, "corpus tts (%s): %zu/%zu utterances, %s of audio, %.0fx real time, ETA %s\n",
                             split.c_str(), i + 1, selected.size(), training::format_duration(audio_seconds).c_str(),
                             audio_seconds / std::max(elapsed, 1e-9),
                             training::format_duration(elapsed / (i + 1) * (selected.size() - i - 1)).c_str());
                last = Clock::now();
            }
        }
        const auto choices = training::choose_voice_prompts(encoded, max_prompt_frames, o.seed);
        const auto sequences = training::make_speech_sequences(encoded, choices, layout);
        const auto path = std::filesystem::path(o.output) / (split + ".tokens");
        training::write_token_corpus(path, sequences);
        // Which utterance prompted which: the speech benchmark uses the same voice prompts.
        std::ofstream prompts(std::filesystem::path(o.output) / (split + "_prompts.tsv"));
        prompts << "id\tprompt_id\tprompt_begin_frame\tprompt_frames\n";
        int64_t target_tokens = 0;
        for (size_t i = 0; i < encoded.size(); ++i) {
            if (choices[i].length == 0) continue;
            prompts << encoded[i].id << '\t' << encoded[choices[i].prompt_index].id << '\t' << choices[i].begin << '\t'
                    << choices[i].length << '\n';
            target_tokens += static_cast<int64_t>(encoded[i].codes.size() + encoded[i].markers.size()) + 1;
        }
        std::printf("%s: %zu sequences (%zu utterances without a second of their voice skipped), %lld target tokens, "
                    "%.2f h of audio -> %s\n",
                    split.c_str(), sequences.size(), encoded.size() - sequences.size(),
                    static_cast<long long>(target_tokens), audio_seconds / 3600.0, path.string().c_str());
    }
    std::printf("layout: text ids [%lld, %lld), codes [%lld, %lld), audio start %lld, end %lld, vocabulary %lld "
                "(layout.json); %.0f s\n",
                static_cast<long long>(layout.text_token_offset),
                static_cast<long long>(layout.text_token_offset + layout.text_token_count),
                static_cast<long long>(layout.audio_token_offset),
                static_cast<long long>(layout.audio_token_offset + layout.audio_token_count),
                static_cast<long long>(layout.audio_start_token), static_cast<long long>(layout.end_token),
                static_cast<long long>(layout.vocab_size()),
                std::chrono::duration<double>(Clock::now() - start).count());
    return exit_ok;
}

}  // namespace

std::pair<CLI::App*, std::function<int()>> add_tts_corpus_subcommand(CLI::App& corpus) {
    auto options = std::make_shared<TtsCorpusOptions>();
    auto* tts = corpus.add_subcommand(
        "tts", "token corpora for a zero-shot TTS target: [text][start][voice prompt][start] | [codes][end]");
    tts->add_option("--pipeline", options->pipeline, "pipeline whose [frontend] and [codec] make the tokens")
        ->required()
        ->check(CLI::ExistingFile);
    tts->add_option("--manifest", options->manifest, "speech corpus manifest.tsv")->required()->check(CLI::ExistingFile);
    tts->add_option("--output", options->output, "directory: {train,dev,test}.tokens, layout.json, *_prompts.tsv")
        ->required();
    tts->add_option("--prompt-seconds", options->prompt_seconds, "longest voice prompt (default 3)")
        ->check(CLI::Range(0.2, 60.0));
    tts->add_option("--seed", options->seed, "seed of the voice prompt choice (default 1)");
    tts->add_option("--limit", options->limit, "utterances per split; 0: all")->check(CLI::NonNegativeNumber);
    tts->add_flag("--phone-markers", options->phone_markers,
                  "text = the phones the corpus's .phones files say were spoken, each also marked among the codes "
                  "where it begins (the frontend's vocabulary must hold them: frontend.flite)");
    tts->add_option("--text-slots", options->text_slots,
                    "text ids the layout reserves (>= the frontend's vocabulary), to keep an earlier layout's code ids")
        ->check(CLI::PositiveNumber);
    return {tts, [options] { return run_tts_corpus(*options); }};
}

}  // namespace cadenza::cli
