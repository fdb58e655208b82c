#include "bench_command.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "bench_costs.h"
#include "bench_report.h"
#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "pipeline_config.h"
#include "speech_bench.h"
#include "transcribe_command.h"

namespace cadenza::cli {
namespace {

struct BenchOptions {
    std::vector<std::string> pipelines;
    std::string suite;  // empty: the texts of --texts
    std::string texts_file;
    std::string json_file, csv_file, plot_file;
    uint64_t seed = 1;
    int repeats = 20;
    size_t max_texts = 0;
    size_t rounds = 0;  // speech suite; 0: one per 10 sentences
    size_t timing_repeats = 1;  // speech suite
    size_t seeds = 1;           // speech suite
    bool audio_after_loop = false;  // speech suite
    SpeechSentenceSource sentences;
    recognition::TranscriptionOptions recognition;
};

// The options of one suite, to refuse them in the other.
struct SuiteOptions {
    std::vector<CLI::Option*> texts;   // --texts, --max-texts
    std::vector<CLI::Option*> speech;  // --manifest, --prompts, --split, --limit, --jobs, --plot, recognizer options
};

std::vector<std::string> read_texts(const std::string& file, size_t limit) {
    std::ifstream in(file);
    if (!in) throw Error(CDZ_STATUS_NOT_FOUND, file + ": cannot open the texts file");
    std::vector<std::string> texts;
    std::string line;
    while (std::getline(in, line) && (limit == 0 || texts.size() < limit))
        if (line.find_first_not_of(" \t\r") != std::string::npos) texts.push_back(line);
    if (texts.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, file + ": no texts (one per line)");
    return texts;
}

void refuse(const std::vector<CLI::Option*>& options, const std::string& why) {
    for (const auto* option : options)
        if (option->count() > 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, option->get_name() + " " + why);
}

int run_texts_bench(const BenchOptions& options) {
    const auto texts = read_texts(options.texts_file, options.max_texts);
    std::vector<PipelineRun> runs;
    for (size_t p = 0; p < options.pipelines.size(); ++p) {
        const std::string& file = options.pipelines[p];
        Engine engine(load_pipeline_config_file(file));
        PipelineRun run;
        run.file = file;
        run.name = engine.config().name;
        run.has_drafter = engine.has_drafter();
        run.verifies = engine.verifies_drafts();
        for (size_t t = 0; t < texts.size(); ++t) {
            std::cerr << "\r[" << p + 1 << "/" << options.pipelines.size() << "] " << run.name << ": text " << t + 1
                      << "/" << texts.size() << std::flush;
            SynthesisRequest request;
            request.text = texts[t];
            request.seed = options.seed + t;
            engine.synthesize(request);
            run.stats.add(engine.stats());
        }
        std::cerr << "\r[" << p + 1 << "/" << options.pipelines.size() << "] " << run.name << ": measuring costs   "
                  << std::flush;
        run.costs = measure_bench_costs(engine, options.repeats);
        std::cerr << "\r" << std::string(60, ' ') << "\r" << std::flush;
        runs.push_back(std::move(run));
    }

    std::vector<PipelineFigures> figures;
    for (const auto& run : runs) figures.push_back(compute_figures(run, runs.front()));
    print_bench_table(std::cout, runs, figures, texts.size());
    if (!options.json_file.empty()) {
        std::ofstream json(options.json_file);
        if (!json) throw Error(CDZ_STATUS_IO_ERROR, options.json_file + ": cannot write");
        json << bench_json(runs, figures, texts.size()).dump(2) << '\n';
        std::cerr << "wrote " << options.json_file << '\n';
    }
    if (!options.csv_file.empty()) {
        std::ofstream csv(options.csv_file);
        if (!csv) throw Error(CDZ_STATUS_IO_ERROR, options.csv_file + ": cannot write");
        csv << bench_csv(runs, figures);
        std::cerr << "wrote " << options.csv_file << '\n';
    }
    return exit_ok;
}

int run_bench(const BenchOptions& options, const SuiteOptions& suite_options) {
    if (options.suite.empty()) {
        refuse(suite_options.speech, "belongs to --suite speech");
        if (options.texts_file.empty())
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "bench needs --texts FILE (or --suite speech)");
        return run_texts_bench(options);
    }
    if (options.suite != "speech")
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "unknown suite '" + options.suite + "'; the suites are: speech");
    refuse(suite_options.texts, "is not used by --suite speech (its sentences come from --manifest and --prompts)");
    if (options.sentences.manifest.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--suite speech needs --manifest (the corpus manifest.tsv)");
    if (options.sentences.prompts_file.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "--suite speech needs --prompts (the SPLIT_prompts.tsv written by `cadenza corpus tts`)");
    SpeechBenchOptions speech;
    speech.pipelines = options.pipelines;
    speech.sentences = options.sentences;
    speech.seed = options.seed;
    speech.repeats = options.repeats;
    speech.rounds = options.rounds;
    speech.timing_repeats = options.timing_repeats;
    speech.seeds = options.seeds;
    speech.audio_after_loop = options.audio_after_loop;
    speech.recognition = options.recognition;
    speech.json_file = options.json_file;
    speech.csv_file = options.csv_file;
    speech.plot_file = options.plot_file;
    return run_speech_bench(speech);
}

}  // namespace

Command add_bench_command(CLI::App& app) {
    auto* bench = app.add_subcommand("bench", "compare pipelines on the same texts and seeds: speed, acceptance, ceiling");
    auto options = std::make_shared<BenchOptions>();
    auto suite_options = std::make_shared<SuiteOptions>();
    options->sentences.limit = 100;
    options->recognition.jobs = 0;
    bench->add_option("-p,--pipeline", options->pipelines, "pipeline TOML files; the first is the baseline")
        ->required()
        ->check(CLI::ExistingFile);
    bench->add_option("--suite", options->suite,
                      "speech: the sentences of a corpus split with their voice prompts, judged by pocketsphinx "
                      "(default: the texts of --texts)");
    suite_options->texts.push_back(
        bench->add_option("--texts", options->texts_file, "a text file, one text per line")->check(CLI::ExistingFile));
    bench->add_option("--json", options->json_file, "also write every figure to this JSON file");
    bench->add_option("--csv", options->csv_file, "also write one row per pipeline to this CSV file");
    bench->add_option("--seed", options->seed, "seed of the first text; text i uses seed + i")->capture_default_str();
    bench->add_option("--repeats", options->repeats, "timed repetitions of each cost measurement")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    suite_options->texts.push_back(
        bench->add_option("--max-texts", options->max_texts, "use at most this many texts (0: all)")
            ->capture_default_str());

    const auto options_before = bench->get_options().size();
    bench->add_option("--manifest", options->sentences.manifest, "speech suite: the corpus manifest.tsv")
        ->check(CLI::ExistingFile);
    bench->add_option("--prompts", options->sentences.prompts_file,
                      "speech suite: the SPLIT_prompts.tsv of `cadenza corpus tts` (which utterance prompts which)")
        ->check(CLI::ExistingFile);
    bench->add_option("--split", options->sentences.split, "speech suite: train, dev or test (default test)")
        ->check(CLI::IsMember({"train", "dev", "test"}));
    bench->add_option("--limit", options->sentences.limit,
                      "speech suite: the first N sentences of the prompts file (default 100; 0: all)");
    bench->add_option("--rounds", options->rounds,
                      "speech suite: time the sentences in this many rounds, each running every pipeline on its "
                      "block of sentences in turn, so that a machine whose speed drifts slows every pipeline alike "
                      "(default: one round per 10 sentences)");
    bench->add_option("--timing-repeats", options->timing_repeats,
                      "speech suite: time each round's blocks this many times in turn; each sentence keeps the "
                      "repeat with the median wall time (its repeats must be the same audio; default 1)")
        ->check(CLI::Range(1, 20));
    bench->add_option("--seeds", options->seeds,
                      "speech suite: synthesize each sentence with this many seeds in every pipeline (seed + i, "
                      "then seed + i + N, ... for N sentences); the WER intervals resample the sentences with all "
                      "their seeds (default 1)")
        ->check(CLI::Range(1, 20));
    bench->add_flag("--audio-after-loop", options->audio_after_loop,
                    "speech suite: decode each sentence's audio after its decoding loop rather than streaming it "
                    "beside the loop, so that the loop runs alone, as the ceiling's cost model measured it");
    bench->add_option("--jobs,-j", options->recognition.jobs,
                      "speech suite: recognition threads, each with its own decoder (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    bench->add_option("--plot", options->plot_file, "speech suite: draw speedup against WER to this PNG (gnuplot)");
    add_recognizer_options(bench, options->recognition.recognizer);
    const auto all_options = bench->get_options();
    suite_options->speech.assign(all_options.begin() + static_cast<std::ptrdiff_t>(options_before), all_options.end());
    return {bench, [options, suite_options] { return run_bench(*options, *suite_options); }};
}

}  // namespace cadenza::cli
