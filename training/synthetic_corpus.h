// A synthetic token corpus from a random hidden Markov source: S hidden
// states, each with a few successors (sparse transitions, often itself, as
// speech tokens repeat) and a few likely tokens it emits. The next token is
// predictable from the context (the state can be inferred) but not trivial
// (transitions and emissions stay random), and a small model learns it in
// minutes. No LibTorch.
#pragma once

#include <cstdint>
#include <vector>

#include "token_corpus.h"

namespace cadenza::training {

struct SyntheticCorpusOptions {
    int64_t sequences = 1000;
    int64_t vocab = 256;        // tokens 0..vocab-1
    int64_t states = 64;        // hidden states
    uint64_t seed = 0;
    int64_t prompt_length = 4;  // the chain's first tokens, written before the '|'
    int64_t length = 64;        // target tokens per sequence, continuing the same chain
    int64_t successors = 3;     // non-zero transitions per state
    int64_t emissions = 3;      // tokens each state emits
};

// The source itself: transitions[s] and emissions[s] as (index, probability).
class HiddenMarkovSource {
public:
    explicit HiddenMarkovSource(const SyntheticCorpusOptions& options);

    std::vector<TokenSequence> generate() const;

    // What the Bayes-optimal predictor (the forward algorithm on the true
    // source) achieves on the target tokens of `sequences` after the first
    // token of each sequence: mean cross-entropy in nats and argmax accuracy.
    struct Oracle {
        double loss = 0;
        double accuracy = 0;
        int64_t tokens = 0;
    };
    Oracle oracle(const std::vector<TokenSequence>& sequences) const;

    const SyntheticCorpusOptions& options() const { return options_; }

private:
    struct Choice {
        int64_t index;
        double probability;
    };
    SyntheticCorpusOptions options_;
    std::vector<std::vector<Choice>> transitions_;
    std::vector<std::vector<Choice>> emissions_;
};

// Validates the options (throws cadenza::Error) and generates the corpus.
std::vector<TokenSequence> generate_synthetic_corpus(const SyntheticCorpusOptions& options);

}  // namespace cadenza::training
