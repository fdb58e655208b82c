#include "speech_token_corpus.h"

#include <map>
#include <random>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace cadenza::training {

int64_t SpeechTokenLayout::vocab_size() const {
    int64_t size = std::max(text_token_offset + text_token_count, audio_token_offset + audio_token_count);
    return std::max({size, audio_start_token + 1, end_token + 1});
}

SpeechTokenLayout SpeechTokenLayout::packed(int64_t text_count, int64_t code_count) {
    SpeechTokenLayout layout;
    layout.text_token_offset = 0;
    layout.text_token_count = text_count;
    layout.audio_token_offset = text_count;
    layout.audio_token_count = code_count;
    layout.audio_start_token = text_count + code_count;
    layout.end_token = text_count + code_count + 1;
    return layout;
}

std::string SpeechTokenLayout::to_json() const {
    nlohmann::ordered_json j;
    j["text_token_offset"] = text_token_offset;
    j["text_token_count"] = text_token_count;
    j["audio_token_offset"] = audio_token_offset;
    j["audio_token_count"] = audio_token_count;
    j["audio_start_token"] = audio_start_token;
    j["end_token"] = end_token;
    if (phone_markers) j["phone_markers"] = true;
    if (text_pad_id >= 0) j["text_pad_id"] = text_pad_id;
    j["vocab_size"] = vocab_size();
    return j.dump(2);
}

SpeechTokenLayout SpeechTokenLayout::from_json(const std::string& text, const std::string& where) {
    try {
        const auto j = nlohmann::json::parse(text);
        SpeechTokenLayout layout;
        layout.text_token_offset = j.at("text_token_offset").get<int64_t>();
        layout.text_token_count = j.at("text_token_count").get<int64_t>();
        layout.audio_token_offset = j.at("audio_token_offset").get<int64_t>();
        layout.audio_token_count = j.at("audio_token_count").get<int64_t>();
        layout.audio_start_token = j.at("audio_start_token").get<int64_t>();
        layout.end_token = j.at("end_token").get<int64_t>();
        layout.phone_markers = j.value("phone_markers", false);
        layout.text_pad_id = j.value("text_pad_id", int64_t{-1});
        return layout;
    } catch (const nlohmann::json::exception& error) {
        throw std::runtime_error(where + ": token layout: " + error.what());
    }
}

std::vector<VoicePromptChoice> choose_voice_prompts(const std::vector<EncodedUtterance>& utterances,
                                                    int64_t max_prompt_frames, uint64_t seed) {
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
    for (size_t i = 0; i < utterances.size(); ++i)
        groups[{utterances[i].voice, utterances[i].variation}].push_back(i);
    std::vector<VoicePromptChoice> choices(utterances.size());
    std::mt19937_64 random(seed);
    for (size_t i = 0; i < utterances.size(); ++i) {
        const auto& group = groups.at({utterances[i].voice, utterances[i].variation});
        VoicePromptChoice& choice = choices[i];
        choice.prompt_index = i;
        if (group.size() < 2) continue;
        size_t pick = group[random() % (group.size() - 1)];
        if (pick == i) pick = group.back();  // the one member the draw leaves out stands in for i itself
        choice.prompt_index = pick;
        const int64_t frames = static_cast<int64_t>(utterances[pick].codes.size());
        choice.length = std::min(frames, max_prompt_frames);
        choice.begin = frames > choice.length ? static_cast<int64_t>(random() % static_cast<uint64_t>(frames - choice.length + 1)) : 0;
    }
    return choices;
}

std::vector<PhoneMarker> place_phone_markers(const std::vector<int32_t>& phone_ids,
                                             const std::vector<double>& phone_ends, int64_t frames,
                                             double frame_rate) {
    if (phone_ids.size() != phone_ends.size()) throw std::invalid_argument("one end time per phone");
    if (!(frame_rate > 0)) throw std::invalid_argument("the frame rate must be positive");
    std::vector<PhoneMarker> markers;
    int64_t frame = 0;
    for (size_t k = 0; k < phone_ids.size(); ++k) {
        markers.push_back({frame, phone_ids[k]});
        const bool last = k + 1 == phone_ids.size();
        while (frame < frames && (last || static_cast<double>(frame) / frame_rate < phone_ends[k])) ++frame;
    }
    return markers;
}

std::vector<TokenSequence> make_speech_sequences(const std::vector<EncodedUtterance>& utterances,
                                                 const std::vector<VoicePromptChoice>& prompts,
                                                 const SpeechTokenLayout& layout) {
    if (prompts.size() != utterances.size()) throw std::invalid_argument("one voice prompt choice per utterance");
    std::vector<TokenSequence> sequences;
    for (size_t i = 0; i < utterances.size(); ++i) {
        const VoicePromptChoice& prompt = prompts[i];
        if (prompt.length == 0 || utterances[i].codes.empty()) continue;
        TokenSequence sequence;
        auto& tokens = sequence.tokens;
        for (int32_t id : utterances[i].text_ids) {
            if (id < 0 || id >= layout.text_token_count)
                throw std::out_of_range("utterance " + utterances[i].id + ": text id " + std::to_string(id) +
                                        " outside the layout's " + std::to_string(layout.text_token_count));
            tokens.push_back(static_cast<int32_t>(layout.text_token_offset + id));
        }
        tokens.push_back(static_cast<int32_t>(layout.audio_start_token));
        const auto& prompt_codes = utterances[prompt.prompt_index].codes;
        for (int64_t k = prompt.begin; k < prompt.begin + prompt.length; ++k)
            tokens.push_back(static_cast<int32_t>(layout.audio_token_offset + prompt_codes[static_cast<size_t>(k)]));
        tokens.push_back(static_cast<int32_t>(layout.audio_start_token));
        sequence.prompt_length = static_cast<int64_t>(tokens.size());
        const auto& codes = utterances[i].codes;
        const auto& markers = utterances[i].markers;
        size_t next_marker = 0;
        const auto place_markers_before = [&](int64_t frame) {
            for (; next_marker < markers.size() && markers[next_marker].frame <= frame; ++next_marker) {
                const int32_t id = markers[next_marker].text_id;
                if (id < 0 || id >= layout.text_token_count)
                    throw std::out_of_range("utterance " + utterances[i].id + ": phone marker " + std::to_string(id) +
                                            " outside the layout's " + std::to_string(layout.text_token_count));
                tokens.push_back(static_cast<int32_t>(layout.text_token_offset + id));
            }
        };
        for (size_t f = 0; f < codes.size(); ++f) {
            place_markers_before(static_cast<int64_t>(f));
            const int32_t code = codes[f];
            if (code < 0 || code >= layout.audio_token_count)
                throw std::out_of_range("utterance " + utterances[i].id + ": code " + std::to_string(code) +
                                        " outside the layout's " + std::to_string(layout.audio_token_count));
            tokens.push_back(static_cast<int32_t>(layout.audio_token_offset + code));
        }
        place_markers_before(static_cast<int64_t>(codes.size()));
        tokens.push_back(static_cast<int32_t>(layout.end_token));
        sequences.push_back(std::move(sequence));
    }
    return sequences;
}

}  // namespace cadenza::training
