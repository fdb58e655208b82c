#include "corpus_plan.h"

#include <filesystem>
#include <stdexcept>

namespace cadenza::speech_corpus {
namespace {

// Trimmed speech seconds = base + per letter * letters at duration factor 1,
// fitted by least squares on 300 utterances of the seven voices (each voice's
// total within 4% of the fit except flite.rms, 13% longer, and flite.kal16,
// 8% shorter).
constexpr double speech_seconds_base = 0.49;
constexpr double speech_seconds_per_letter = 0.065;

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t name_hash(const std::string& name) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const unsigned char c : name) hash = (hash ^ c) * 0x100000001b3ULL;
    return hash;
}

// "flite.slt" -> "flite_slt": ids keep one kind of separator inside a part.
std::string id_part(const std::string& voice) {
    std::string part = voice;
    for (char& c : part)
        if (c == '.') c = '_';
    return part;
}

PlannedUtterance plan_utterance(const CorpusSentence& sentence, const CorpusVoice& voice,
                                const std::filesystem::path& output) {
    // The variation depends on the sentence and the voice, not on the round.
    const auto& variations = voice.variations;
    const Variation& variation =
        variations[mix(sentence.hash ^ name_hash(voice.voice.name)) % variations.size()];
    PlannedUtterance planned;
    Utterance& u = planned.utterance;
    u.id = sentence.id + "-" + id_part(voice.voice.name) + "-" + variation.name;
    u.split = sentence.split;
    u.voice = voice.voice.name;
    u.variation = variation.name;
    u.text = sentence.text;
    u.path = (output / "wav" / voice.voice.name / (u.id + ".wav")).string();
    u.duration_seconds = estimated_speech_seconds(sentence.text) * variation.duration_factor;
    planned.sentence_id = sentence.id;
    planned.spoken = sentence.spoken;
    planned.voice = &voice;
    planned.variation = variation;
    return planned;
}

}  // namespace

double estimated_speech_seconds(const std::string& text) {
    size_t letters = 0;
    for (const char c : text) letters += c >= 'a' && c <= 'z';
    return speech_seconds_base + speech_seconds_per_letter * static_cast<double>(letters);
}

std::vector<PlannedUtterance> plan_corpus(const std::vector<CorpusSentence>& sentences,
                                          const std::vector<CorpusVoice>& voices, double train_hours,
                                          const std::string& output_directory) {
    if (voices.empty()) throw std::invalid_argument("no voices to speak the corpus with");
    for (const auto& voice : voices)
        if (voice.variations.empty()) throw std::invalid_argument(voice.voice.name + " has no variations");
    const std::filesystem::path output = std::filesystem::absolute(output_directory);
    const auto first_voice = [&](const CorpusSentence& s) { return mix(s.hash ^ 0x766f696365ULL) % voices.size(); };

    std::vector<PlannedUtterance> plan;
    for (const char* split : {"test", "dev"})
        for (const auto& s : sentences)
            if (s.split == split) plan.push_back(plan_utterance(s, voices[first_voice(s)], output));

    std::vector<const CorpusSentence*> train;
    for (const auto& s : sentences)
        if (s.split == "train") train.push_back(&s);
    const double target_seconds = train_hours * 3600.0;
    double planned_seconds = 0.0;
    for (size_t round = 0; round < voices.size() && planned_seconds < target_seconds; ++round) {
        for (const CorpusSentence* s : train) {
            if (planned_seconds >= target_seconds) break;
            plan.push_back(plan_utterance(*s, voices[(first_voice(*s) + round) % voices.size()], output));
            planned_seconds += plan.back().utterance.duration_seconds;
        }
    }
    return plan;
}

}  // namespace cadenza::speech_corpus
