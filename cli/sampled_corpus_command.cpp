#include "sampled_corpus_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "error.h"
#include "exit_codes.h"
#include "pipeline_config.h"
#include "token_corpus.h"

namespace cadenza::cli {
namespace {

struct SampledCorpusOptions {
    std::string pipeline, corpus, output;
    int64_t limit = 0;  // prompts; 0: every prompt of the training part
    uint64_t seed = 1;
    double holdout = 0.0;
    uint64_t split_seed = 1;
    double max_seconds = 0.0;  // 0: the pipeline's
    std::string part = "train";  // the split's part whose prompts are continued
};

// The complete lines already in `path` (a resumed run), after cutting a last
// line that a stopped run left half written.
int64_t complete_lines(const std::filesystem::path& path) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return 0;
    if (!std::filesystem::is_regular_file(path))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + ": not a regular file");
    std::string text;
    {
        std::ifstream in(path, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const size_t end = text.rfind('\n');
    const size_t keep = end == std::string::npos ? 0 : end + 1;
    if (keep != text.size()) std::filesystem::resize_file(path, keep);
    int64_t lines = 0;
    for (size_t i = 0; i < keep; ++i) lines += text[i] == '\n';
    return lines;
}

int write_sampled_corpus(const SampledCorpusOptions& o) {
    const training::TokenCorpus corpus = training::load_token_corpus(o.corpus);
    const training::CorpusSplit split = training::split_corpus(corpus, o.holdout, o.split_seed);
    const std::vector<const training::TokenSequence*>& prompts = o.part == "heldout" ? split.heldout : split.train;
    const auto total = static_cast<int64_t>(
        o.limit > 0 ? std::min<size_t>(static_cast<size_t>(o.limit), prompts.size()) : prompts.size());
    Engine engine(load_pipeline_config_file(o.pipeline));

    const int64_t done = complete_lines(o.output);
    if (done > total)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, o.output + ": holds " + std::to_string(done) + " sequences, more than the " +
                                                     std::to_string(total) + " asked for");
    if (done > 0) std::printf("%s: resuming after %lld sequences\n", o.output.c_str(), static_cast<long long>(done));
    std::ofstream out(o.output, std::ios::binary | std::ios::app);
    if (!out) throw Error(CDZ_STATUS_INVALID_ARGUMENT, o.output + ": cannot open for writing");

    const auto start = std::chrono::steady_clock::now();
    int64_t tokens = 0, unfinished = 0;
    const int32_t end_token = engine.backbone_info().end_token;
    for (int64_t i = done; i < total; ++i) {
        const training::TokenSequence& source = *prompts[static_cast<size_t>(i)];
        if (source.prompt_length <= 0)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, corpus.where(source) + ": a line without a prompt ('prompt | target')");
        training::TokenSequence sampled;
        sampled.tokens.assign(source.tokens.begin(), source.tokens.begin() + source.prompt_length);
        sampled.prompt_length = source.prompt_length;
        // One seed per sequence, so that a resumed run writes what one run would.
        const std::vector<int32_t> continuation =
            engine.continue_prompt(sampled.tokens, o.seed + static_cast<uint64_t>(i), o.max_seconds);
        if (continuation.empty() || continuation.back() != end_token) ++unfinished;
        sampled.tokens.insert(sampled.tokens.end(), continuation.begin(), continuation.end());
        tokens += static_cast<int64_t>(continuation.size());
        out << training::format_sequence(sampled) << '\n' << std::flush;
        if (!out) throw Error(CDZ_STATUS_INVALID_ARGUMENT, o.output + ": writing failed");

        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const int64_t here = i + 1 - done;
        if (here % 50 == 0 || i + 1 == total) {
            const double rate = static_cast<double>(tokens) / std::max(seconds, 1e-9);
            const double left = seconds / static_cast<double>(here) * static_cast<double>(total - i - 1);
            std::printf("sampled %lld/%lld sequences, %lld tokens in %.0f s (%.0f tokens/s), %.0f s left\n",
                        static_cast<long long>(i + 1), static_cast<long long>(total), static_cast<long long>(tokens),
                        seconds, rate, left);
            std::fflush(stdout);
        }
    }
    std::printf("wrote %s: %lld sequences (%lld this run, %lld without the end token within the time limit)\n",
                o.output.c_str(), static_cast<long long>(total), static_cast<long long>(total - done),
                static_cast<long long>(unfinished));
    return exit_ok;
}

}  // namespace

std::pair<CLI::App*, std::function<int()>> add_sampled_corpus_subcommand(CLI::App& corpus) {
    auto options = std::make_shared<SampledCorpusOptions>();
    auto* sampled = corpus.add_subcommand(
        "sampled", "the target's own samples: each prompt of a token corpus continued by a pipeline's backbone "
                   "(self-distillation data for drafts)");
    sampled->add_option("--pipeline", options->pipeline, "pipeline whose backbone samples (plain decoding: ar.toml)")
        ->required()
        ->check(CLI::ExistingFile);
    sampled->add_option("--corpus", options->corpus, "token corpus whose prompts are continued")
        ->required()
        ->check(CLI::ExistingFile);
    sampled->add_option("--output", options->output,
                        "the corpus to write, one line per prompt as it is sampled; an existing file is resumed")
        ->required();
    sampled->add_option("--limit", options->limit, "prompts to continue, in the split's order; 0: all")
        ->check(CLI::NonNegativeNumber);
    sampled->add_option("--seed", options->seed, "seed of the first sequence; sequence i uses seed + i (default 1)");
    sampled->add_option("--holdout", options->holdout,
                        "leave out the prompts `cadenza train` holds out with the same --holdout and --split-seed")
        ->check(CLI::Range(0.0, 0.5));
    sampled->add_option("--split-seed", options->split_seed, "seed of that split (default 1)");
    sampled->add_option("--part", options->part,
                        "the split's part whose prompts are continued: train (default), or heldout (an evaluation "
                        "set for `cadenza train --eval-corpus`)")
        ->check(CLI::IsMember({"train", "heldout"}));
    sampled->add_option("--max-seconds", options->max_seconds, "audio per sequence at most; 0: the pipeline's")
        ->check(CLI::Range(0.0, 3600.0));
    return {sampled, [options] { return write_sampled_corpus(*options); }};
}

}  // namespace cadenza::cli
