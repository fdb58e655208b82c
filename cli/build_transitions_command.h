// `cadenza build-transitions`: counts token bigrams over a corpus, smooths
// them (add-alpha), row-normalizes and writes the transition matrix Q that
// acceptor.viterbi reads (docs/formats.md, "Transitions file").
#pragma once

#include <cstdint>
#include <string>

#include "command.h"

namespace cadenza::cli {

struct BuildTransitionsOptions {
    std::string corpus;      // text: one sequence per line, whitespace-separated non-negative integers
    int64_t vocab = 0;       // every token must be < vocab
    double alpha = 0.1;      // add-alpha smoothing, >= 0
    std::string output;
    int64_t sparse_top = -1; // -1: automatic (dense up to dense_vocab_limit); 0: dense; N > 0: sparse, top N per row
};

// Vocabularies up to this size are written dense when --sparse-top is not given.
constexpr int64_t dense_vocab_limit = 4096;
// The top-N per row of an automatic sparse matrix.
constexpr int64_t default_sparse_top = 64;

int build_transitions(const BuildTransitionsOptions& options);

Command add_build_transitions_command(CLI::App& app);

}  // namespace cadenza::cli
