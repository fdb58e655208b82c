// 95% intervals by the sentence bootstrap: the test sentences are resampled
// with replacement, and a statistic is taken over each resample as its point
// estimate is taken over all of them: a WER is the resample's word errors
// summed over its reference words summed, a speedup its tokens summed over
// its seconds summed, against the same for the baseline. Every call draws the
// same resamples (a fixed seed), so a report repeats, and a comparison of two
// pipelines is paired: both are scored on the same resampled sentences.
//
//     SentenceBootstrap bootstrap(words_of_a.size());
//     Interval a = bootstrap.wer_percent(words_of_a);              // [lo, hi] in %
//     Interval d = bootstrap.wer_difference_points(words_of_b, words_of_a);  // B - A, in points
//     Interval s = bootstrap.speedup(timed_b, timed_a);            // B's tokens/s over A's
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "error_rate.h"

namespace cadenza::evaluation {

struct Interval {
    double low = 0;
    double high = 0;
};

// One sentence's generated tokens and the seconds it took to generate them
// (0 and 0 for a sentence left out of the speed figures).
struct TimedTokens {
    double tokens = 0;
    double seconds = 0;
};

class SentenceBootstrap {
public:
    static constexpr int default_resamples = 2000;
    static constexpr uint64_t default_seed = 1;
    static constexpr double default_confidence = 0.95;

    // Throws std::invalid_argument unless resamples >= 1 and 0 < confidence < 1.
    explicit SentenceBootstrap(size_t sentence_count, int resamples = default_resamples,
                               uint64_t seed = default_seed, double confidence = default_confidence);

    // The interval of the WER (percent) of `sentences`, one EditCounts of words per sentence.
    Interval wer_percent(const std::vector<recognition::EditCounts>& sentences) const;
    // The interval of WER(pipeline) - WER(baseline) in percentage points, each
    // resample scoring both on the same sentences.
    Interval wer_difference_points(const std::vector<recognition::EditCounts>& pipeline,
                                   const std::vector<recognition::EditCounts>& baseline) const;
    // The interval of the speedup of `pipeline` over `baseline`: each
    // resample's tokens per second (summed, then divided) over the
    // baseline's on the same sentences. A resample in which either took no
    // time is left out; if every one is, the interval is [0, 0].
    Interval speedup(const std::vector<TimedTokens>& pipeline, const std::vector<TimedTokens>& baseline) const;

    size_t sentence_count() const { return sentence_count_; }
    int resamples() const { return resamples_; }
    uint64_t seed() const { return seed_; }
    double confidence() const { return confidence_; }

private:
    // `statistic` of each resample's sentence indices, in resample order;
    // the same indices on every call.
    std::vector<double> resampled(const std::function<double(const std::vector<size_t>&)>& statistic) const;
    void check_size(size_t given) const;

    size_t sentence_count_;
    int resamples_;
    uint64_t seed_;
    double confidence_;
};

// The (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of `values`,
// interpolated linearly between order statistics. Throws
// std::invalid_argument on no values.
Interval percentile_interval(std::vector<double> values, double confidence);

// 100 * (errors summed / reference words summed) over `indices` of `sentences`.
double resample_wer_percent(const std::vector<recognition::EditCounts>& sentences, const std::vector<size_t>& indices);

// Tokens summed / seconds summed over `indices` of `sentences`; 0 when they took no time.
double resample_tokens_per_second(const std::vector<TimedTokens>& sentences, const std::vector<size_t>& indices);

}  // namespace cadenza::evaluation
