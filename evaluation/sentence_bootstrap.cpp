#include "sentence_bootstrap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>

namespace cadenza::evaluation {
namespace {

// Uniform in [0, n) from mt19937_64 draws, by rejection: unlike
// std::uniform_int_distribution, the same on every standard library.
size_t uniform_index(std::mt19937_64& rng, size_t n) {
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    const uint64_t accepted_below = max - max % n;  // a multiple of n
    uint64_t draw = rng();
    while (draw >= accepted_below) draw = rng();
    return static_cast<size_t>(draw % n);
}

}  // namespace

SentenceBootstrap::SentenceBootstrap(size_t sentence_count, int resamples, uint64_t seed, double confidence)
    : sentence_count_(sentence_count), resamples_(resamples), seed_(seed), confidence_(confidence) {
    if (resamples < 1)
        throw std::invalid_argument("bootstrap: resamples must be at least 1, not " + std::to_string(resamples));
    if (!(confidence > 0 && confidence < 1))
        throw std::invalid_argument("bootstrap: the confidence must lie in (0, 1), not " + std::to_string(confidence));
}

std::vector<double> SentenceBootstrap::resampled(
    const std::function<double(const std::vector<size_t>&)>& statistic) const {
    std::mt19937_64 rng(seed_);
    std::vector<size_t> indices(sentence_count_);
    std::vector<double> values;
    values.reserve(static_cast<size_t>(resamples_));
    for (int r = 0; r < resamples_; ++r) {
        for (auto& index : indices) index = uniform_index(rng, sentence_count_);
        values.push_back(statistic(indices));
    }
    return values;
}

void SentenceBootstrap::check_size(size_t given) const {
    if (given != sentence_count_)
        throw std::invalid_argument("bootstrap: " + std::to_string(given) + " sentences given, " +
                                    std::to_string(sentence_count_) + " expected");
}

Interval SentenceBootstrap::wer_percent(const std::vector<recognition::EditCounts>& sentences) const {
    check_size(sentences.size());
    return percentile_interval(
        resampled([&](const std::vector<size_t>& indices) { return resample_wer_percent(sentences, indices); }),
        confidence_);
}

Interval SentenceBootstrap::wer_difference_points(const std::vector<recognition::EditCounts>& pipeline,
                                                  const std::vector<recognition::EditCounts>& baseline) const {
    check_size(pipeline.size());
    check_size(baseline.size());
    return percentile_interval(resampled([&](const std::vector<size_t>& indices) {
                                   return resample_wer_percent(pipeline, indices) -
                                          resample_wer_percent(baseline, indices);
                               }),
                               confidence_);
}

Interval SentenceBootstrap::speedup(const std::vector<TimedTokens>& pipeline,
                                    const std::vector<TimedTokens>& baseline) const {
    check_size(pipeline.size());
    check_size(baseline.size());
    constexpr double untimed = -1;  // a resample left out
    std::vector<double> ratios = resampled([&](const std::vector<size_t>& indices) {
        const double rate = resample_tokens_per_second(pipeline, indices);
        const double baseline_rate = resample_tokens_per_second(baseline, indices);
        return rate > 0 && baseline_rate > 0 ? rate / baseline_rate : untimed;
    });
    ratios.erase(std::remove(ratios.begin(), ratios.end(), untimed), ratios.end());
    return ratios.empty() ? Interval{} : percentile_interval(std::move(ratios), confidence_);
}

Interval percentile_interval(std::vector<double> values, double confidence) {
    if (values.empty()) throw std::invalid_argument("bootstrap: no values to take an interval of");
    std::sort(values.begin(), values.end());
    auto quantile = [&](double q) {
        const double position = q * static_cast<double>(values.size() - 1);
        const auto below = static_cast<size_t>(std::floor(position));
        const size_t above = std::min(below + 1, values.size() - 1);
        const double t = position - static_cast<double>(below);
        // Equal neighbours give their value exactly, not a rounded blend.
        return values[below] == values[above] ? values[below] : values[below] + t * (values[above] - values[below]);
    };
    return {quantile((1 - confidence) / 2), quantile((1 + confidence) / 2)};
}

double resample_wer_percent(const std::vector<recognition::EditCounts>& sentences, const std::vector<size_t>& indices) {
    recognition::EditCounts total;
    for (size_t index : indices) total += sentences.at(index);
    return 100.0 * total.rate();
}

double resample_tokens_per_second(const std::vector<TimedTokens>& sentences, const std::vector<size_t>& indices) {
    double tokens = 0, seconds = 0;
    for (size_t index : indices) {
        tokens += sentences.at(index).tokens;
        seconds += sentences.at(index).seconds;
    }
    return seconds > 0 ? tokens / seconds : 0.0;
}

}  // namespace cadenza::evaluation
