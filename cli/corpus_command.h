// `cadenza corpus ...`: makes token corpora for `cadenza train`
// (docs/training.md). `synthetic` writes one from a random hidden Markov
// source; real-speech subcommands join it here.
#pragma once

#include "command.h"
#include "backbone_layout.h"
#include "synthetic_corpus.h"

namespace cadenza::cli {

struct SyntheticCorpusCommand {
    std::string output;
    training::SyntheticCorpusOptions source;
    bool backbone_layout = false;  // --audio-offset given
    training::BackboneLayout layout;
};

// Writes the corpus and prints its size and what the ideal predictor (the
// forward algorithm on the true source) and the unigram baseline achieve.
int write_synthetic_corpus(const SyntheticCorpusCommand& command);

Command add_corpus_command(CLI::App& app);

}  // namespace cadenza::cli
