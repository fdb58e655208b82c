#include "bench_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "bench_report.h"
#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "pipeline_config.h"

namespace cadenza::cli {
namespace {

struct BenchOptions {
    std::vector<std::string> pipelines;
    std::string texts_file;
    std::string json_file;
    uint64_t seed = 1;
    int repeats = 20;
    size_t max_texts = 0;
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

int run_bench(const BenchOptions& options) {
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
        // The sizes of the table, and the size this pipeline's steps verify.
        std::set<int> sizes{1, 2, 4, 8, 16, 32};
        if (run.has_drafter && run.verifies) sizes.insert(engine.draft_max_nodes() + 1);
        run.costs = engine.measure_costs(std::vector<int>(sizes.begin(), sizes.end()), options.repeats);
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
    return exit_ok;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
    auto* bench = app.add_subcommand("bench", "compare pipelines on the same texts and seeds: speed, acceptance, ceiling");
    auto options = std::make_shared<BenchOptions>();
    bench->add_option("-p,--pipeline", options->pipelines, "pipeline TOML files; the first is the baseline")
        ->required()
        ->check(CLI::ExistingFile);
    bench->add_option("--texts", options->texts_file, "a text file, one text per line")->required()->check(CLI::ExistingFile);
    bench->add_option("--json", options->json_file, "also write every figure to this JSON file");
    bench->add_option("--seed", options->seed, "seed of the first text; text i uses seed + i")->capture_default_str();
    bench->add_option("--repeats", options->repeats, "timed repetitions of each cost measurement")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    bench->add_option("--max-texts", options->max_texts, "use at most this many texts (0: all)")->capture_default_str();
    return {bench, [options] { return run_bench(*options); }};
}

}  // namespace cadenza::cli
