#include "corpus_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "exit_codes.h"
#include "sampled_corpus_command.h"
#include "speech_corpus_command.h"
#include "tts_corpus_command.h"
#include "token_corpus.h"

namespace cadenza::cli {

int write_synthetic_corpus(const SyntheticCorpusCommand& command) {
    const auto start = std::chrono::steady_clock::now();
    const training::HiddenMarkovSource source(command.source);
    const std::vector<training::TokenSequence> sequences = source.generate();
    if (command.backbone_layout) {
        training::BackboneLayout layout = command.layout;
        layout.seed = command.source.seed;
        training::write_token_corpus(command.output,
                                     training::apply_backbone_layout(sequences, command.source.vocab, layout));
    } else {
        training::write_token_corpus(command.output, sequences);
    }

    // The unigram baseline: always the most frequent target token.
    std::vector<int64_t> counts(static_cast<size_t>(command.source.vocab), 0);
    int64_t tokens = 0, labelled = 0;
    for (const auto& s : sequences) {
        tokens += static_cast<int64_t>(s.tokens.size());
        for (size_t t = std::max<int64_t>(1, s.prompt_length); t < s.tokens.size(); ++t, ++labelled)
            ++counts[static_cast<size_t>(s.tokens[t])];
    }
    const int64_t most = *std::max_element(counts.begin(), counts.end());
    const auto oracle = source.oracle(sequences);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char text[512];
    std::snprintf(text, sizeof(text),
                  "wrote %s: %lld sequences, %lld tokens (prompt %lld + target %lld per sequence), vocab %lld, "
                  "%lld hidden states, in %.2f s\n"
                  "next-token accuracy on the target tokens: ideal predictor %.2f%% (loss %.4f nats/token), "
                  "most frequent token %.2f%%\n",
                  command.output.c_str(), static_cast<long long>(sequences.size()), static_cast<long long>(tokens),
                  static_cast<long long>(command.source.prompt_length), static_cast<long long>(command.source.length),
                  static_cast<long long>(command.source.vocab), static_cast<long long>(command.source.states), seconds,
                  100.0 * oracle.accuracy, oracle.loss,
                  labelled > 0 ? 100.0 * static_cast<double>(most) / static_cast<double>(labelled) : 0.0);
    std::cout << text;
    return exit_ok;
}

Command add_corpus_command(CLI::App& app) {
    auto* corpus = app.add_subcommand("corpus", "make token corpora for `cadenza train`");
    corpus->require_subcommand(1);
    std::vector<std::pair<CLI::App*, std::function<int()>>> runs;

    {
        auto command = std::make_shared<SyntheticCorpusCommand>();
        auto& s = command->source;
        auto* synthetic = corpus->add_subcommand(
            "synthetic", "sequences from a random hidden Markov source (predictable, not trivial; for tests and CI)");
        synthetic->add_option("--output", command->output, "the corpus file to write")->required();
        synthetic->add_option("--sequences", s.sequences, "number of sequences")->required()->check(CLI::PositiveNumber);
        synthetic->add_option("--vocab", s.vocab, "tokens 0..V-1")->required()->check(CLI::Range(int64_t{2}, int64_t{1} << 30));
        synthetic->add_option("--states", s.states, "hidden states of the source")->required()->check(CLI::PositiveNumber);
        synthetic->add_option("--seed", s.seed, "seed of the source and the sequences")->required();
        synthetic->add_option("--prompt-length", s.prompt_length,
                              "prompt tokens per sequence, before the '|' (the chain's start, not trained on; default 4)")
            ->check(CLI::NonNegativeNumber);
        synthetic->add_option("--length", s.length, "target tokens per sequence (default 64)")->check(CLI::PositiveNumber);
        // A speech backbone's layout: [text ids][audio start] | [audio tokens][end].
        auto& layout = command->layout;
        auto* offset = synthetic->add_option("--audio-offset", layout.audio_offset,
                                             "lay the corpus out for a backbone: target tokens shifted to start here, "
                                             "the prompt replaced by random text ids");
        synthetic->add_option("--text-vocab", layout.text_vocab, "text ids of the prompt come from [0, N)")
            ->needs(offset)
            ->check(CLI::PositiveNumber);
        synthetic->add_option("--text-length", layout.text_length, "text ids per prompt (default 12)")
            ->needs(offset)
            ->check(CLI::PositiveNumber);
        synthetic->add_option("--audio-start", layout.audio_start, "token appended to each prompt")->needs(offset);
        synthetic->add_option("--end", layout.end, "token appended to each target")->needs(offset);
        synthetic->callback([command, offset] { command->backbone_layout = offset->count() > 0; });
        runs.emplace_back(synthetic, [command] { return write_synthetic_corpus(*command); });
    }
    runs.push_back(add_speech_corpus_subcommand(*corpus));
    runs.push_back(add_tts_corpus_subcommand(*corpus));
    runs.push_back(add_sampled_corpus_subcommand(*corpus));

    return {corpus, [runs] {
                for (const auto& [command, run] : runs)
                    if (command->parsed()) return run();
                return static_cast<int>(exit_internal_error);
            }};
}

}  // namespace cadenza::cli
