#include "speech_sentences.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "corpus_manifest.h"
#include "error.h"
#include "resampler.h"
#include "wav_file.h"

namespace cadenza::cli {
namespace {

const char* const prompts_header = "id\tprompt_id\tprompt_begin_frame\tprompt_frames";

Error input_error(const std::string& message) { return Error(CDZ_STATUS_INVALID_ARGUMENT, message); }


int64_t parse_frame_count(const std::string& text, const std::string& where, const char* column) {
    try {
        size_t used = 0;
        const long long value = std::stoll(text, &used);
        if (used == text.size() && value >= 0) return value;
    } catch (const std::exception&) {
    }
    throw input_error(where + ": " + column + " must be a non-negative integer, not '" + text + "'");
}

// The line of each id in the manifest, so that a missing recording can be
// reported where it is listed (read_corpus_manifest keeps no line numbers).
std::unordered_map<std::string, int> manifest_lines(const std::string& path) {
    std::unordered_map<std::string, int> lines;
    std::ifstream input(path);
    std::string line;
    for (int number = 1; std::getline(input, line); ++number)
        if (number > 1 && !line.empty()) lines.emplace(line.substr(0, line.find('\t')), number);
    return lines;
}

}  // namespace

SpeechSentenceSet read_speech_sentences(const SpeechSentenceSource& source) {
    std::vector<speech_corpus::Utterance> utterances;
    try {
        utterances = speech_corpus::read_corpus_manifest(source.manifest);
    } catch (const std::runtime_error& error) {
        throw input_error(error.what());
    }
    std::unordered_map<std::string, size_t> by_id;
    for (size_t i = 0; i < utterances.size(); ++i) by_id.emplace(utterances[i].id, i);
    const auto lines = manifest_lines(source.manifest);
    auto manifest_where = [&](const std::string& id) {
        const auto line = lines.find(id);
        return source.manifest + (line == lines.end() ? "" : ":" + std::to_string(line->second));
    };
    auto require_audio = [&](const speech_corpus::Utterance& u, const std::string& where, const char* role) {
        if (!std::filesystem::is_regular_file(u.path))
            throw input_error(where + ": the audio of " + role + " '" + u.id + "' (" + manifest_where(u.id) +
                              ") is missing: " + u.path);
    };

    std::ifstream input(source.prompts_file);
    if (!input) throw Error(CDZ_STATUS_NOT_FOUND, source.prompts_file + ": cannot open the prompts file");
    std::string line;
    const bool has_header = static_cast<bool>(std::getline(input, line));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!has_header || line != prompts_header)
        throw input_error(source.prompts_file + ":1: the header must be `" + std::string(prompts_header) +
                          "` (tab-separated, as `cadenza corpus tts` writes it)");

    SpeechSentenceSet set;
    std::unordered_map<std::string, int> seen;  // id -> line
    for (int number = 2; std::getline(input, line); ++number) {
        if (source.limit > 0 && set.sentences.size() >= source.limit) break;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        const std::string where = source.prompts_file + ":" + std::to_string(number);
        const auto fields = speech_corpus::split_tab_fields(line);
        if (fields.size() != 4)
            throw input_error(where + ": expected 4 tab-separated fields (id, prompt_id, prompt_begin_frame, "
                                      "prompt_frames), found " + std::to_string(fields.size()));
        const auto [previous, inserted] = seen.emplace(fields[0], number);
        if (!inserted)
            throw input_error(where + ": utterance '" + fields[0] + "' is listed twice (first on line " +
                              std::to_string(previous->second) + ")");
        const auto utterance = by_id.find(fields[0]);
        if (utterance == by_id.end())
            throw input_error(where + ": utterance '" + fields[0] + "' is not in " + source.manifest);
        const auto prompt = by_id.find(fields[1]);
        if (prompt == by_id.end())
            throw input_error(where + ": prompt utterance '" + fields[1] + "' is not in " + source.manifest);
        const int64_t begin = parse_frame_count(fields[2], where, "prompt_begin_frame");
        const int64_t frames = parse_frame_count(fields[3], where, "prompt_frames");

        const speech_corpus::Utterance& u = utterances[utterance->second];
        if (u.split != source.split) {
            ++set.other_splits;
            continue;
        }
        if (frames == 0) {
            ++set.skipped_without_prompt;
            continue;
        }
        const speech_corpus::Utterance& p = utterances[prompt->second];
        require_audio(u, where, "utterance");
        require_audio(p, where, "prompt utterance");
        SpeechSentence sentence;
        sentence.id = u.id;
        sentence.text = u.text;
        sentence.voice = u.voice;
        sentence.audio_path = u.path;
        sentence.prompt_id = p.id;
        sentence.prompt_path = p.path;
        sentence.prompt_begin_frame = begin;
        sentence.prompt_frames = frames;
        sentence.where = where;
        set.sentences.push_back(std::move(sentence));
    }
    if (set.sentences.empty())
        throw input_error(source.prompts_file + ": no utterance of split '" + source.split + "' with a voice prompt (" +
                          std::to_string(set.skipped_without_prompt) + " without one, " +
                          std::to_string(set.other_splits) + " of other splits)");
    return set;
}

void cut_voice_prompts(SpeechSentenceSet& set, int sample_rate, double frame_rate) {
    if (sample_rate <= 0 || !(frame_rate > 0))
        throw Error(CDZ_STATUS_INVALID_CONFIG, "the codec reports no sample rate or frame rate");
    const double hop = sample_rate / frame_rate;
    for (auto& sentence : set.sentences) {
        audio::Waveform wave;
        try {
            wave = audio::read_waveform(sentence.prompt_path);
        } catch (const std::runtime_error& error) {
            throw input_error(sentence.where + ": the audio of prompt utterance '" + sentence.prompt_id +
                              "': " + error.what());
        }
        std::vector<float> samples = wave.sample_rate == sample_rate
                                         ? std::move(wave.samples)
                                         : audio::resample(wave.samples, wave.sample_rate, sample_rate);
        const auto first = static_cast<size_t>(std::llround(sentence.prompt_begin_frame * hop));
        auto last = static_cast<size_t>(std::llround((sentence.prompt_begin_frame + sentence.prompt_frames) * hop));
        // A codec's last frame may cover a partial hop; more than that is a
        // prompts file made with another codec.
        const double available_frames = samples.size() / hop;
        if (first >= samples.size() || last > samples.size() + static_cast<size_t>(std::ceil(hop)))
            throw input_error(sentence.where + ": frames [" + std::to_string(sentence.prompt_begin_frame) + ", " +
                              std::to_string(sentence.prompt_begin_frame + sentence.prompt_frames) +
                              ") exceed the " + std::to_string(static_cast<int64_t>(std::ceil(available_frames))) +
                              " frames of '" + sentence.prompt_id + "' (" + sentence.prompt_path + ") at " +
                              std::to_string(frame_rate) + " frames/s; was the prompts file made with another codec?");
        last = std::min(last, samples.size());
        sentence.voice_prompt.assign(samples.begin() + static_cast<std::ptrdiff_t>(first),
                                     samples.begin() + static_cast<std::ptrdiff_t>(last));
    }
    set.prompt_sample_rate = sample_rate;
}

}  // namespace cadenza::cli
