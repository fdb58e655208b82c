#include "synthetic_corpus.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "error.h"
#include "random_bits.h"

namespace cadenza::training {
namespace {

void check_options(const SyntheticCorpusOptions& o) {
    auto require = [](bool ok, const std::string& message) {
        if (!ok) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "synthetic corpus: " + message);
    };
    require(o.sequences >= 1, "--sequences must be at least 1");
    require(o.vocab >= 2 && o.vocab <= 0x7fffffff, "--vocab must be in [2, 2^31)");
    require(o.states >= 1, "--states must be at least 1");
    require(o.prompt_length >= 0, "--prompt-length must be non-negative");
    require(o.length >= 1, "--length must be at least 1");
    require(o.successors >= 1, "successors must be at least 1");
    require(o.emissions >= 1 && o.emissions <= o.vocab, "emissions must be in [1, vocab]");
}

// `count` distinct values of [0, n) (count <= n), in drawing order.
std::vector<int64_t> distinct(SplitMix64& random, int64_t n, int64_t count, int64_t first = -1) {
    std::vector<int64_t> picked;
    if (first >= 0) picked.push_back(first);
    while (static_cast<int64_t>(picked.size()) < std::min(count, n)) {
        const auto value = static_cast<int64_t>(random.below(static_cast<uint64_t>(n)));
        if (std::find(picked.begin(), picked.end(), value) == picked.end()) picked.push_back(value);
    }
    return picked;
}

// Dirichlet(1, ..., 1) weights, sharpened a little (squared and renormalised)
// so that most states have one clearly likely choice.
std::vector<double> weights(SplitMix64& random, size_t count) {
    std::vector<double> w(count);
    double total = 0;
    for (auto& x : w) {
        const double e = random.exponential() + 1e-3;
        x = e * e;
        total += x;
    }
    for (auto& x : w) x /= total;
    return w;
}

template <typename Choices>
int64_t draw(SplitMix64& random, const Choices& choices) {
    double u = random.uniform();
    for (const auto& c : choices) {
        if (u < c.probability) return c.index;
        u -= c.probability;
    }
    return choices.back().index;
}

}  // namespace

HiddenMarkovSource::HiddenMarkovSource(const SyntheticCorpusOptions& options) : options_(options) {
    check_options(options);
    SplitMix64 random(derive_seed(options.seed, 0x4d4d));
    transitions_.resize(static_cast<size_t>(options.states));
    emissions_.resize(static_cast<size_t>(options.states));
    for (int64_t s = 0; s < options.states; ++s) {
        // Half of the states may stay (durations, as in speech tokens).
        const bool stays = random.below(2) == 0;
        const auto next = distinct(random, options.states, options.successors, stays ? s : -1);
        const auto p = weights(random, next.size());
        for (size_t i = 0; i < next.size(); ++i) transitions_[s].push_back({next[i], p[i]});
        const auto tokens = distinct(random, options.vocab, options.emissions);
        const auto q = weights(random, tokens.size());
        for (size_t i = 0; i < tokens.size(); ++i) emissions_[s].push_back({tokens[i], q[i]});
    }
}

std::vector<TokenSequence> HiddenMarkovSource::generate() const {
    std::vector<TokenSequence> sequences;
    sequences.reserve(static_cast<size_t>(options_.sequences));
    for (int64_t n = 0; n < options_.sequences; ++n) {
        SplitMix64 random(derive_seed(options_.seed, 0x10000 + static_cast<uint64_t>(n)));
        TokenSequence sequence;
        sequence.prompt_length = options_.prompt_length;
        sequence.line = n + 1;
        const int64_t total = options_.prompt_length + options_.length;
        sequence.tokens.reserve(static_cast<size_t>(total));
        auto state = static_cast<int64_t>(random.below(static_cast<uint64_t>(options_.states)));
        for (int64_t t = 0; t < total; ++t) {
            if (t > 0) state = draw(random, transitions_[state]);
            sequence.tokens.push_back(static_cast<int32_t>(draw(random, emissions_[state])));
        }
        sequences.push_back(std::move(sequence));
    }
    return sequences;
}

HiddenMarkovSource::Oracle HiddenMarkovSource::oracle(const std::vector<TokenSequence>& sequences) const {
    const auto states = static_cast<size_t>(options_.states);
    const auto vocab = static_cast<size_t>(options_.vocab);
    // emission probability of token v in state s, sparse by token.
    std::vector<std::vector<Choice>> emitted_by(vocab);  // token -> (state, probability)
    for (size_t s = 0; s < states; ++s)
        for (const auto& e : emissions_[s]) emitted_by[static_cast<size_t>(e.index)].push_back({static_cast<int64_t>(s), e.probability});

    Oracle result;
    double loss = 0;
    int64_t correct = 0;
    std::vector<double> belief(states), prior(states), predictive(vocab);
    for (const auto& sequence : sequences) {
        // Before the first token the state is uniform.
        std::fill(prior.begin(), prior.end(), 1.0 / static_cast<double>(states));
        for (size_t t = 0; t < sequence.tokens.size(); ++t) {
            const auto token = static_cast<size_t>(sequence.tokens[t]);
            if (t >= 1 && static_cast<int64_t>(t) >= sequence.prompt_length) {
                std::fill(predictive.begin(), predictive.end(), 0.0);
                for (size_t s = 0; s < states; ++s)
                    if (prior[s] > 0)
                        for (const auto& e : emissions_[s]) predictive[static_cast<size_t>(e.index)] += prior[s] * e.probability;
                const size_t best = static_cast<size_t>(std::max_element(predictive.begin(), predictive.end()) - predictive.begin());
                correct += best == token ? 1 : 0;
                loss -= std::log(std::max(predictive[token], 1e-300));
                ++result.tokens;
            }
            // Condition on the token, then step the chain.
            double total = 0;
            std::fill(belief.begin(), belief.end(), 0.0);
            if (token < vocab)
                for (const auto& e : emitted_by[token]) {
                    belief[static_cast<size_t>(e.index)] = prior[static_cast<size_t>(e.index)] * e.probability;
                    total += belief[static_cast<size_t>(e.index)];
                }
            if (total <= 0) {  // impossible under the source: forget
                std::fill(belief.begin(), belief.end(), 1.0 / static_cast<double>(states));
                total = 1;
            }
            std::fill(prior.begin(), prior.end(), 0.0);
            for (size_t s = 0; s < states; ++s)
                if (belief[s] > 0)
                    for (const auto& n : transitions_[s]) prior[static_cast<size_t>(n.index)] += belief[s] / total * n.probability;
        }
    }
    if (result.tokens > 0) {
        result.loss = loss / static_cast<double>(result.tokens);
        result.accuracy = static_cast<double>(correct) / static_cast<double>(result.tokens);
    }
    return result;
}

std::vector<TokenSequence> generate_synthetic_corpus(const SyntheticCorpusOptions& options) {
    return HiddenMarkovSource(options).generate();
}

}  // namespace cadenza::training
