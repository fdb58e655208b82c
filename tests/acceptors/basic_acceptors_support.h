// Shared by the tests of acceptor.exact, acceptor.bias and acceptor.tolerance:
// a toy target/draft model with fixed random distributions per context, the
// drafting of token trees from it, and the count of the first two tokens a
// run of decoding steps emits (for the chi-square tests).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <numeric>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "acceptor_harness.h"

namespace cadenza::test::basic {

// The plugins' table bodies as the tests write them.
inline std::string table_of(const std::string& plugin, const std::string& extra = "") {
    return "plugin = \"" + plugin + "\"\n" + extra;
}

// A Dirichlet(alpha) distribution over `vocab` tokens.
inline std::vector<float> dirichlet(int64_t vocab, double alpha, std::mt19937_64& generator) {
    std::gamma_distribution<double> gamma(alpha, 1.0);
    std::vector<double> weights(static_cast<size_t>(vocab));
    double total = 0.0;
    for (double& weight : weights) total += (weight = gamma(generator));
    if (!(total > 0.0)) {
        std::fill(weights.begin(), weights.end(), 1.0);
        total = static_cast<double>(vocab);
    }
    std::vector<float> probabilities(weights.size());
    for (size_t i = 0; i < weights.size(); ++i) probabilities[i] = static_cast<float>(weights[i] / total);
    return probabilities;
}

inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Target p(. | context) and draft q(. | context) for every token sequence,
// made on first use from a seed and the context, so every call sees the same
// rows. q = norm((1 - draft_mix) * p + draft_mix * an independent Dirichlet).
class ToyModel {
public:
    ToyModel(int64_t vocab, uint64_t seed, double alpha = 1.0, double draft_mix = 1.0)
        : vocab_(vocab), seed_(seed), alpha_(alpha), draft_mix_(draft_mix) {}

    int64_t vocab() const { return vocab_; }

    const std::vector<float>& target(const std::vector<int32_t>& context) {
        const uint64_t key = key_of(context);
        auto found = targets_.find(key);
        if (found != targets_.end()) return found->second;
        std::mt19937_64 generator(hash(context, 1));
        return targets_.emplace(key, dirichlet(vocab_, alpha_, generator)).first->second;
    }

    const std::vector<float>& draft(const std::vector<int32_t>& context) {
        const uint64_t key = key_of(context);
        auto found = drafts_.find(key);
        if (found != drafts_.end()) return found->second;
        std::mt19937_64 generator(hash(context, 2));
        const std::vector<float> noise = dirichlet(vocab_, alpha_, generator);
        const std::vector<float>& p = target(context);
        std::vector<double> mixed(static_cast<size_t>(vocab_));
        double total = 0.0;
        for (size_t i = 0; i < mixed.size(); ++i) total += (mixed[i] = (1.0 - draft_mix_) * p[i] + draft_mix_ * noise[i]);
        std::vector<float> q(mixed.size());
        for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<float>(mixed[i] / total);
        return drafts_.emplace(key, std::move(q)).first->second;
    }

    // p(token | context) normalized in double.
    double probability(const std::vector<int32_t>& context, int32_t token) {
        const std::vector<float>& p = target(context);
        const double total = std::accumulate(p.begin(), p.end(), 0.0);
        return p[static_cast<size_t>(token)] / total;
    }

private:
    // A context as a number in base vocab + 1 (the tests' contexts are short).
    uint64_t key_of(const std::vector<int32_t>& context) const {
        uint64_t key = 0;
        const uint64_t base = static_cast<uint64_t>(vocab_) + 1;
        for (int32_t token : context) {
            if (key > (UINT64_MAX - base) / base) throw std::length_error("ToyModel: context too long");
            key = key * base + static_cast<uint64_t>(token) + 1;
        }
        return key;
    }

    uint64_t hash(const std::vector<int32_t>& context, uint64_t salt) const {
        uint64_t h = mix64(seed_ ^ (salt * 0x632be59bd9b4e019ULL));
        for (int32_t token : context) h = mix64(h ^ static_cast<uint64_t>(token + 1));
        return h;
    }

    int64_t vocab_;
    uint64_t seed_;
    double alpha_;
    double draft_mix_;
    // Element references stay valid across insertions (node-based container).
    std::unordered_map<uint64_t, std::vector<float>> targets_, drafts_;
};

// One decoding step's acceptor input.
struct Step {
    std::vector<int32_t> tokens, parents;
    std::vector<float> target;  // [(n + 1) * vocab]
    std::vector<float> draft;   // [n * vocab], empty for greedy drafts
};

// Drafts a tree of the given shape after `prefix`: node i's token is drawn
// from q(. | its parent's context) (siblings i.i.d., with replacement). With
// `greedy` the k-th child of a node instead takes the k-th most likely token
// of q (distinct siblings) and no draft rows are sent.
inline Step draft_step(ToyModel& model, const std::vector<int32_t>& prefix, const std::vector<int32_t>& shape,
                       uint64_t& draw_state, bool greedy = false) {
    const int64_t vocab = model.vocab();
    const size_t n = shape.size();
    Step step;
    step.parents = shape;
    step.tokens.resize(n);
    std::vector<std::vector<int32_t>> contexts(n);
    std::vector<int32_t> rank_of_parent(n + 1, 0);
    auto context_of = [&](int32_t parent) -> const std::vector<int32_t>& {
        return parent < 0 ? prefix : contexts[static_cast<size_t>(parent)];
    };
    step.target.insert(step.target.end(), model.target(prefix).begin(), model.target(prefix).end());
    for (size_t i = 0; i < n; ++i) {
        const int32_t parent = shape[i];
        const std::vector<float>& q = model.draft(context_of(parent));
        int32_t token;
        if (greedy) {
            std::vector<int32_t> order(static_cast<size_t>(vocab));
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return q[a] > q[b]; });
            token = order[static_cast<size_t>(rank_of_parent[static_cast<size_t>(parent + 1)]++)];
        } else {
            token = sample_from(q, draw_state);
            step.draft.insert(step.draft.end(), q.begin(), q.end());
        }
        step.tokens[i] = token;
        contexts[i] = context_of(parent);
        contexts[i].push_back(token);
        const std::vector<float>& p = model.target(contexts[i]);
        step.target.insert(step.target.end(), p.begin(), p.end());
    }
    (void)vocab;
    return step;
}

using AcceptFunction = std::function<AcceptResult(const Step&, int64_t vocab)>;

inline AcceptFunction through(const AcceptorHarness& harness) {
    return [&harness](const Step& step, int64_t vocab) {
        return harness.accept(step.tokens, step.parents, vocab, step.target, step.draft);
    };
}

// Counts of the first emitted token and of the first two, over `samples`
// decoding runs from the empty prefix, each step drafting a tree of `shape`.
// When a step emits a single token (the correction at the root), the second
// comes from the next step, as in the engine.
struct FirstTwoCounts {
    std::vector<int64_t> first;  // [vocab]
    std::vector<int64_t> pair;   // [vocab * vocab], first * vocab + second
    double mean_accepted = 0.0;  // over the first steps
};

inline FirstTwoCounts count_first_two(ToyModel& model, const std::vector<int32_t>& shape,
                                      const AcceptFunction& accept, int64_t samples, uint64_t draw_seed,
                                      bool greedy = false) {
    const int64_t vocab = model.vocab();
    FirstTwoCounts counts;
    counts.first.assign(static_cast<size_t>(vocab), 0);
    counts.pair.assign(static_cast<size_t>(vocab * vocab), 0);
    uint64_t draw_state = draw_seed;
    int64_t accepted = 0;
    for (int64_t s = 0; s < samples; ++s) {
        const AcceptResult result = accept(draft_step(model, {}, shape, draw_state, greedy), vocab);
        accepted += static_cast<int64_t>(result.accepted_nodes.size());
        const int32_t first = result.emitted.at(0);
        int32_t second;
        if (result.emitted.size() >= 2) {
            second = result.emitted[1];
        } else {
            second = accept(draft_step(model, {first}, shape, draw_state, greedy), vocab).emitted.at(0);
        }
        ++counts.first[static_cast<size_t>(first)];
        ++counts.pair[static_cast<size_t>(first * vocab + second)];
    }
    counts.mean_accepted = static_cast<double>(accepted) / static_cast<double>(samples);
    return counts;
}

// The target's own probabilities of the first token and of the first two.
inline std::vector<double> expected_first(ToyModel& model) {
    std::vector<double> expected(static_cast<size_t>(model.vocab()));
    for (int32_t a = 0; a < model.vocab(); ++a) expected[static_cast<size_t>(a)] = model.probability({}, a);
    return expected;
}

inline std::vector<double> expected_pair(ToyModel& model) {
    const int64_t vocab = model.vocab();
    std::vector<double> expected(static_cast<size_t>(vocab * vocab));
    for (int32_t a = 0; a < vocab; ++a)
        for (int32_t b = 0; b < vocab; ++b)
            expected[static_cast<size_t>(a * vocab + b)] = model.probability({}, a) * model.probability({a}, b);
    return expected;
}

struct ChiSquare {
    double statistic;
    double critical;
    int degrees;
    bool passes() const { return statistic < critical; }
};

inline ChiSquare chi_square_test(const std::vector<int64_t>& observed, const std::vector<double>& expected) {
    ChiSquare result{};
    result.statistic = chi_square(observed, expected, result.degrees);
    result.critical = chi_square_critical_999(result.degrees);
    return result;
}

inline std::ostream& operator<<(std::ostream& out, const ChiSquare& chi) {
    return out << "chi2 = " << chi.statistic << " (df " << chi.degrees << ", 0.999 critical " << chi.critical << ")";
}

// A target row set at temperature 0: row r one-hot at argmax[r].
inline std::vector<float> one_hot_rows(const std::vector<int32_t>& argmax, int64_t vocab) {
    std::vector<float> rows(argmax.size() * static_cast<size_t>(vocab), 0.0f);
    for (size_t r = 0; r < argmax.size(); ++r) rows[r * static_cast<size_t>(vocab) + static_cast<size_t>(argmax[r])] = 1.0f;
    return rows;
}

// Greedy verification (the SDK template's rule): walk from the prefix, take
// the first child (in index order) whose token is the argmax of the row after
// its parent, and emit the argmax after the last accepted node.
inline AcceptResult argmax_walk(const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents,
                                const std::vector<int32_t>& argmax) {
    AcceptResult result;
    int32_t current = -1;
    for (;;) {
        int32_t chosen = -1;
        for (int32_t i = current + 1; i < static_cast<int32_t>(tokens.size()); ++i)
            if (parents[i] == current && tokens[i] == argmax[static_cast<size_t>(current + 1)]) {
                chosen = i;
                break;
            }
        if (chosen < 0) break;
        result.accepted_nodes.push_back(chosen);
        result.emitted.push_back(tokens[chosen]);
        current = chosen;
    }
    result.emitted.push_back(argmax[static_cast<size_t>(current + 1)]);
    return result;
}

// A random tree shape: parents[i] uniform in [-1, i - 1].
inline std::vector<int32_t> random_shape(int32_t nodes, std::mt19937_64& generator) {
    std::vector<int32_t> parents(static_cast<size_t>(nodes));
    for (int32_t i = 0; i < nodes; ++i) parents[static_cast<size_t>(i)] =
        std::uniform_int_distribution<int32_t>(-1, i - 1)(generator);
    return parents;
}

}  // namespace cadenza::test::basic
