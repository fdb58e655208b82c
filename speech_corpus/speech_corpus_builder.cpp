#include "speech_corpus_builder.h"

#include <filesystem>
#include <stdexcept>
#include <unordered_set>

#include "sentence_splits.h"

namespace cadenza::speech_corpus {
namespace {

namespace fs = std::filesystem;

void say(const SpeechCorpusOptions& options, const std::string& line) {
    if (options.log) *options.log << line << std::endl;
}

std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.*f", decimals, value);
    return text;
}

// WAV files under wav/ that the plan does not hold: left by a run with
// other options (seed, voices, hours) or an older sentence list. Counted,
// and deleted when `remove` is set.
size_t stray_wav_files(const fs::path& wav, const std::vector<PlannedUtterance>& plan, bool remove) {
    if (!fs::is_directory(wav)) return 0;
    std::unordered_set<std::string> planned;
    for (const auto& p : plan) planned.insert(fs::path(p.utterance.path).lexically_normal().string());
    size_t stray = 0;
    for (const auto& entry : fs::recursive_directory_iterator(wav)) {
        if (!entry.is_regular_file()) continue;
        const std::string path = entry.path().lexically_normal().string();
        const bool wav_file = entry.path().extension() == ".wav" ||
                              (path.size() > 12 && path.compare(path.size() - 12, 12, ".wav.partial") == 0);
        if (!wav_file || planned.count(path)) continue;
        ++stray;
        if (remove) fs::remove(entry.path());
    }
    return stray;
}

}  // namespace

CorpusSummary build_speech_corpus(const SpeechCorpusOptions& options) {
    if (options.output.empty()) throw std::invalid_argument("no output directory given");
    if (!(options.train_hours >= 0.0)) throw std::invalid_argument("--train-hours must not be negative");
    if (options.variations_per_voice < 1) throw std::invalid_argument("a voice needs at least one variation");

    CorpusSummary summary;
    summary.command = options.command_line;
    summary.seed = options.seed;
    summary.train_hours_target = options.train_hours;
    summary.fortunes_directory = options.fortunes_directory;
    summary.jobs = options.jobs;

    const VoiceDetection detection = detect_voices();
    std::string installed, missing;
    for (const auto& v : detection.installed) installed += (installed.empty() ? "" : ", ") + v.name;
    for (const auto& v : detection.missing) missing += (missing.empty() ? "" : ", ") + v.name + " (" + v.package + ")";
    say(options, "voices installed: " + (installed.empty() ? std::string("none") : installed));
    if (!missing.empty()) say(options, "voices not installed: " + missing);
    const std::vector<Voice> voices =
        options.voices.empty() ? detection.installed : select_voices(detection, options.voices);
    if (voices.empty())
        throw std::invalid_argument("no voice to speak the corpus with: install flite1-dev (and rebuild) or festival's voices");
    for (const auto& voice : voices)
        summary.voices.push_back({voice, voice_variations(voice.name, options.seed, options.variations_per_voice)});
    summary.missing_voices = detection.missing;

    summary.extraction = extract_fortune_sentences(fortune_files(options.fortunes_directory));
    std::vector<CorpusSentence> sentences = assign_splits(summary.extraction.sentences);
    summary.extraction.sentences.clear();
    if (options.limit_sentences > 0) sentences = limit_per_split(sentences, options.limit_sentences);
    if (sentences.empty()) throw std::invalid_argument(options.fortunes_directory + ": no usable sentences found");
    for (const auto& s : sentences) ++summary.sentences_by_split[s.split];
    say(options, "sentences: " + std::to_string(sentences.size()) + " (train " +
                     std::to_string(summary.sentences_by_split["train"]) + ", dev " +
                     std::to_string(summary.sentences_by_split["dev"]) + ", test " +
                     std::to_string(summary.sentences_by_split["test"]) + ") from " +
                     std::to_string(summary.extraction.files) + " fortune files");

    fs::create_directories(options.output);
    const fs::path output = fs::absolute(options.output);
    write_sentences_tsv((output / "sentences.tsv").string(), sentences);

    const std::vector<PlannedUtterance> plan =
        plan_corpus(sentences, summary.voices, options.train_hours, output.string());
    double estimated_train = 0.0;
    for (const auto& p : plan)
        if (p.utterance.split == "train") estimated_train += p.utterance.duration_seconds;
    say(options, "planned utterances: " + std::to_string(plan.size()) + " (train about " +
                     fixed(estimated_train / 3600.0, 2) + " h)");

    GenerationOptions generation;
    generation.jobs = options.jobs;
    generation.batch_size = options.batch_size;
    generation.work_directory = (output / ".work").string();
    generation.manifest_path = (output / "manifest.tsv").string();
    generation.progress = options.log;
    generation.progress_on_terminal = options.log_is_terminal;
    summary.generation = generate_corpus_audio(plan, generation);
    const GenerationReport& report = summary.generation;
    if (report.generated == 0 && report.failed > 0)
        throw std::runtime_error("every utterance failed (" + std::to_string(report.failed) + "); the first: " +
                                 report.errors.front());

    summary.stray_wav_files = stray_wav_files(output / "wav", plan, options.prune);
    summary.stray_wav_files_deleted = options.prune;
    if (summary.stray_wav_files > 0)
        say(options, std::to_string(summary.stray_wav_files) + " WAV files under wav/ are not in this corpus" +
                         (options.prune ? ": deleted" : " (not in the manifest; --prune deletes them)"));
    write_corpus_manifest(generation.manifest_path, report.utterances);
    tally_utterances(summary, report.utterances);
    write_corpus_summary((output / "corpus.json").string(), summary);
    summary.generation.utterances.clear();
    return summary;
}

}  // namespace cadenza::speech_corpus
