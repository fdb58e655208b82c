#include "corpus_summary.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "replacing_file.h"

namespace cadenza::speech_corpus {
namespace {

nlohmann::json totals_json(const SpeechTotals& totals) {
    return {{"utterances", totals.utterances}, {"hours", totals.hours()}};
}

}  // namespace

void tally_utterances(CorpusSummary& summary, const std::vector<Utterance>& utterances) {
    std::map<std::string, std::set<std::string>> sentences;
    for (const auto& u : utterances) {
        for (SpeechTotals* totals : {&summary.by_split[u.split], &summary.by_voice_and_split[u.voice][u.split],
                                     &summary.by_voice_and_variation[u.voice][u.variation]}) {
            ++totals->utterances;
            totals->seconds += u.duration_seconds;
        }
        sentences[u.split].insert(u.id.substr(0, u.id.find('-')));
    }
    for (const auto& [split, ids] : sentences) summary.spoken_sentences_by_split[split] = ids.size();
}

void write_corpus_summary(const std::string& path, const CorpusSummary& summary) {
    nlohmann::json json;
    json["command"] = summary.command;
    json["seed"] = summary.seed;
    json["sample_rate"] = 16000;
    json["train_hours_target"] = summary.train_hours_target;
    json["fortunes_directory"] = summary.fortunes_directory;

    const SentenceExtraction& e = summary.extraction;
    json["sentence_extraction"] = {{"files", e.files},
                                   {"entries", e.entries},
                                   {"candidates", e.candidates},
                                   {"unreadable", e.unreadable},
                                   {"wrong_length", e.wrong_length},
                                   {"duplicates", e.duplicates}};
    for (const char* split : {"train", "dev", "test"}) {
        const auto count = [&](const std::map<std::string, size_t>& counts) {
            const auto found = counts.find(split);
            return found == counts.end() ? size_t{0} : found->second;
        };
        json["sentences"][split] = {{"available", count(summary.sentences_by_split)},
                                    {"spoken", count(summary.spoken_sentences_by_split)}};
        const auto totals = summary.by_split.find(split);
        json["splits"][split] = totals_json(totals == summary.by_split.end() ? SpeechTotals{} : totals->second);
    }

    json["voices"] = nlohmann::json::array();
    for (const auto& v : summary.voices) {
        nlohmann::json voice = {{"name", v.voice.name},
                                {"engine", v.voice.engine == SynthesisEngine::flite ? "flite" : "festival"},
                                {"engine_voice", v.voice.engine_voice},
                                {"package", v.voice.package}};
        const auto splits = summary.by_voice_and_split.find(v.voice.name);
        for (const char* split : {"train", "dev", "test"}) {
            SpeechTotals totals;
            if (splits != summary.by_voice_and_split.end() && splits->second.count(split)) totals = splits->second.at(split);
            voice["splits"][split] = totals_json(totals);
        }
        voice["variations"] = nlohmann::json::array();
        for (const auto& variation : v.variations) {
            SpeechTotals totals;
            const auto found = summary.by_voice_and_variation.find(v.voice.name);
            if (found != summary.by_voice_and_variation.end() && found->second.count(variation.name))
                totals = found->second.at(variation.name);
            voice["variations"].push_back({{"name", variation.name},
                                           {"duration_factor", variation.duration_factor},
                                           {"pitch_factor", variation.pitch_factor},
                                           {"synthesizer_stretch", variation.synthesizer_stretch()},
                                           {"playback_speed", variation.playback_speed()},
                                           {"utterances", totals.utterances},
                                           {"hours", totals.hours()}});
        }
        json["voices"].push_back(voice);
    }
    json["voices_not_installed"] = nlohmann::json::array();
    for (const auto& v : summary.missing_voices)
        json["voices_not_installed"].push_back({{"name", v.name}, {"package", v.package}});

    const GenerationReport& g = summary.generation;
    json["generation"] = {{"jobs", summary.jobs},
                          {"planned", g.planned},
                          {"reused", g.reused},
                          {"generated", g.generated},
                          {"failed", g.failed},
                          {"wall_seconds", g.wall_seconds},
                          {"generated_audio_hours", g.generated_audio_seconds / 3600.0},
                          {"times_real_time", g.wall_seconds > 0 ? g.generated_audio_seconds / g.wall_seconds : 0.0},
                          {"first_errors", g.errors},
                          {"stray_wav_files", summary.stray_wav_files},
                          {"stray_wav_files_deleted", summary.stray_wav_files_deleted}};

    file_output::ReplacingFile file(path);
    {
        std::ofstream output(file.write_path());
        if (!output) throw std::runtime_error(path + ": cannot write the corpus summary");
        output << json.dump(2) << '\n';
        if (!output.flush()) throw std::runtime_error(path + ": writing the corpus summary failed");
    }
    file.commit();
}

}  // namespace cadenza::speech_corpus
