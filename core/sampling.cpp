#include "sampling.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "error.h"
#include "probability_row.h"
#include "random_stream.h"

namespace cadenza {
namespace {

// The tokens a distribution may give mass to: [begin, end) and `extra`
// (-1: none, or inside [begin, end)), or the whole vocabulary.
struct AllowedTokens {
    int64_t begin = 0, end = 0, extra = -1;

    template <typename Visit>
    void for_each(Visit&& visit) const {
        if (extra >= 0 && extra < begin) visit(extra);
        for (int64_t i = begin; i < end; ++i) visit(i);
        if (extra >= end) visit(extra);
    }
    // visit(first, count) over the contiguous runs, in index order.
    template <typename Visit>
    void for_each_run(Visit&& visit) const {
        if (extra >= 0 && extra < begin) visit(extra, int64_t{1});
        visit(begin, end - begin);
        if (extra >= end) visit(extra, int64_t{1});
    }
};

AllowedTokens allowed_tokens(const cdz_sampling& sampling, int64_t count) {
    if (sampling.struct_size < sizeof(cdz_sampling) || sampling.allowed_end <= 0) return {0, count, -1};
    if (sampling.allowed_begin < 0 || sampling.allowed_begin >= sampling.allowed_end || sampling.allowed_end > count ||
        sampling.allowed_extra >= count)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the allowed token range does not fit the vocabulary");
    const bool extra_outside = sampling.allowed_extra >= 0 &&
                               (sampling.allowed_extra < sampling.allowed_begin || sampling.allowed_extra >= sampling.allowed_end);
    return {sampling.allowed_begin, sampling.allowed_end, extra_outside ? sampling.allowed_extra : -1};
}

void check_settings(const cdz_sampling& sampling, int64_t count) {
    if (count <= 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling over an empty distribution");
    if (!(sampling.temperature >= 0.0) || !std::isfinite(sampling.temperature))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "temperature must be finite and >= 0, got " + std::to_string(sampling.temperature));
    if (!(sampling.top_p > 0.0 && sampling.top_p <= 1.0))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "top_p must be in (0, 1], got " + std::to_string(sampling.top_p));
    if (sampling.top_k < 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "top_k must be >= 0");
}

// Buckets of probabilities in (0, 1] by the top bits of their float
// representation, which orders positive floats: a token in a higher bucket
// is strictly more likely than one in a lower bucket, so only the tokens of
// the bucket where top-k or top-p stops need sorting. 8 buckets per octave.
constexpr int bucket_shift = 20;
constexpr size_t bucket_count = (0x3f800000u >> bucket_shift) + 1;

inline uint32_t bucket_of(float p) {
    uint32_t bits;
    std::memcpy(&bits, &p, sizeof bits);
    return bits >> bucket_shift;
}

// Per thread, reused: sampling allocates nothing once it has seen a vocabulary.
struct Workspace {
    std::array<double, bucket_count> mass{};
    std::array<int64_t, bucket_count> tokens{};
    std::vector<int64_t> boundary;
    std::vector<uint64_t> likely;  // keys of keep_nucleus_among_likely, then kept indices
    std::vector<float> kept_values;
};

Workspace& workspace() {
    thread_local Workspace w;
    return w;
}

// Where the walk down the sorted distribution stops: top_k tokens, or the
// fewest whose mass reaches top_p of the whole.
struct NucleusLimit {
    int64_t keep_k;
    double top_p, mass_limit;
    bool reached(int64_t kept, double cumulative) const {
        return kept >= keep_k || (top_p < 1.0 && cumulative >= mass_limit);
    }
};

// The mass of w.likely[0, kept) (indices, ascending), summed in index order
// as a pass over the whole row would.
double mass_of_kept(const float* probabilities, const Workspace& w, size_t kept) {
    double mass = 0.0;
    for (size_t r = 0; r < kept; ++r) mass += probabilities[w.likely[r]];
    return mass;
}

// Zeroes the allowed tokens outside w.likely[0, kept) (indices, ascending)
// and returns their mass.
double keep_only(const AllowedTokens& allowed, float* probabilities, Workspace& w, size_t kept) {
    w.kept_values.resize(kept);
    for (size_t r = 0; r < kept; ++r) w.kept_values[r] = probabilities[w.likely[r]];
    allowed.for_each_run(
        [&](int64_t first, int64_t count) { std::fill(probabilities + first, probabilities + first + count, 0.0f); });
    for (size_t r = 0; r < kept; ++r) probabilities[w.likely[r]] = w.kept_values[r];
    return mass_of_kept(probabilities, w, kept);
}

// The nucleus from the tokens with at least 1/4096 of the mass alone (at most
// 4096 of them), sorted as the whole vocabulary would be: every other token
// is less likely than each of them, so when the walk stops among them the
// result is the sorted definition's. Nothing when it does not stop there.
constexpr double likely_share = 1.0 / 4096.0;

// Leaves the kept tokens' indices ascending in workspace().likely[0, kept)
// and returns kept.
std::optional<size_t> nucleus_among_likely(const AllowedTokens& allowed, const float* probabilities, double total,
                                           const NucleusLimit& limit) {
    if (allowed.end > static_cast<int64_t>(UINT32_MAX)) return std::nullopt;  // indices fill the keys' low half
    Workspace& w = workspace();
    const auto floor = static_cast<float>(total * likely_share);
    if (!(floor > 0.0f)) return std::nullopt;  // keys order positive floats only
    // Keys that sort as (probability descending, index ascending): a
    // positive float's bits order it. Most blocks hold no likely token and
    // are passed over on their maximum.
    w.likely.resize(static_cast<size_t>(allowed.end - allowed.begin + 1));
    size_t found = 0;
    constexpr int64_t block = 64;
    allowed.for_each_run([&](int64_t first, int64_t n) {
        for (int64_t b = first; b < first + n; b += block) {
            const int64_t block_end = std::min(b + block, first + n);
            if (!(row_max(probabilities + b, block_end - b) >= floor)) continue;
            for (int64_t i = b; i < block_end; ++i) {
                uint32_t bits;
                std::memcpy(&bits, probabilities + i, sizeof bits);
                w.likely[found] = (static_cast<uint64_t>(~bits) << 32) | static_cast<uint64_t>(i);
                found += probabilities[i] >= floor;
            }
        }
    });
    std::sort(w.likely.begin(), w.likely.begin() + static_cast<std::ptrdiff_t>(found));
    size_t kept = 0;
    double cumulative = 0.0;
    while (kept < found && !limit.reached(static_cast<int64_t>(kept), cumulative))
        cumulative += probabilities[w.likely[kept++] & 0xffffffffu];
    if (!limit.reached(static_cast<int64_t>(kept), cumulative)) return std::nullopt;
    for (size_t r = 0; r < kept; ++r) w.likely[r] &= 0xffffffffu;
    std::sort(w.likely.begin(), w.likely.begin() + static_cast<std::ptrdiff_t>(kept));
    return kept;
}

// Keeps the top_k most likely tokens, then the fewest of them whose mass
// reaches top_p (of the whole distribution), ties broken by the lower index,
// exactly as sorting the vocabulary would; zeroes the rest and returns the
// kept mass.
double keep_nucleus(const AllowedTokens& allowed, float* probabilities, double total, int64_t keep_k, double top_p) {
    const NucleusLimit limit{keep_k, top_p, top_p * total};
    if (const std::optional<size_t> kept = nucleus_among_likely(allowed, probabilities, total, limit))
        return keep_only(allowed, probabilities, workspace(), *kept);
    // A flat distribution: buckets of the whole vocabulary.
    Workspace& w = workspace();
    w.mass.fill(0.0);
    w.tokens.fill(0);
    allowed.for_each([&](int64_t i) {
        const uint32_t b = bucket_of(probabilities[i]);
        w.mass[b] += probabilities[i];
        ++w.tokens[b];
    });
    const auto reached = [&](int64_t kept, double cumulative) { return limit.reached(kept, cumulative); };
    int64_t kept = 0;
    double cumulative = 0.0;
    for (size_t b = bucket_count; b-- > 0;) {
        if (w.tokens[b] == 0) continue;
        // Whole buckets while neither limit is reached within them...
        if (!reached(kept + w.tokens[b], cumulative + w.mass[b])) {
            kept += w.tokens[b];
            cumulative += w.mass[b];
            continue;
        }
        // ...then this one in the order a sort would give, token by token
        // (rounding may carry the walk on to the next bucket).
        w.boundary.clear();
        allowed.for_each([&](int64_t i) {
            if (bucket_of(probabilities[i]) == b) w.boundary.push_back(i);
        });
        std::sort(w.boundary.begin(), w.boundary.end(), [&](int64_t x, int64_t y) {
            return probabilities[x] != probabilities[y] ? probabilities[x] > probabilities[y] : x < y;
        });
        size_t taken = 0;
        while (taken < w.boundary.size() && !reached(kept, cumulative)) {
            cumulative += probabilities[w.boundary[taken]];
            ++kept;
            ++taken;
        }
        if (!reached(kept, cumulative)) continue;
        for (size_t r = taken; r < w.boundary.size(); ++r) probabilities[w.boundary[r]] = 0.0f;
        double kept_mass = 0.0;
        allowed.for_each([&](int64_t i) {
            if (bucket_of(probabilities[i]) < b) probabilities[i] = 0.0f;
            kept_mass += probabilities[i];
        });
        return kept_mass;
    }
    return total;
}

// Temperature 0: all mass on the first allowed argmax.
void one_hot_argmax(const AllowedTokens& allowed, const float* logits, float* probabilities) {
    int64_t best = -1;
    bool any_nan = false;
    allowed.for_each([&](int64_t i) {
        any_nan |= std::isnan(logits[i]);
        if (best < 0 || logits[i] > logits[best]) best = i;
    });
    // Every comparison with NaN is false: without this check NaN logits
    // pick the first allowed token, which is the end of speech.
    if (any_nan || !std::isfinite(logits[best]))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the logits are not finite numbers (NaN or infinity)");
    probabilities[best] = 1.0f;
}

// exp((logit - max) / temperature) over the allowed runs (the rest of
// `probabilities` untouched); returns their sum.
double tempered_exponentials(const cdz_sampling& sampling, const AllowedTokens& allowed, const float* logits,
                             float* probabilities) {
    float max_logit = -std::numeric_limits<float>::infinity();
    allowed.for_each_run([&](int64_t first, int64_t n) {
        const float run_max = row_max(logits + first, n);
        max_logit = run_max > max_logit ? run_max : max_logit;
    });
    if (!std::isfinite(max_logit))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the logits are not finite numbers (no allowed token has a finite logit)");
    const float inverse_temperature = static_cast<float>(1.0 / sampling.temperature);
    double total = 0.0;
    allowed.for_each_run([&](int64_t first, int64_t n) {
        exponentiate_row(logits + first, probabilities + first, n, max_logit, inverse_temperature);
        total += row_sum(probabilities + first, n);
    });
    if (!std::isfinite(total))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the logits are not finite numbers (NaN)");
    return total;
}

int64_t nucleus_size_limit(const cdz_sampling& sampling, int64_t count) {
    return sampling.top_k > 0 && sampling.top_k < count ? sampling.top_k : count;
}

}  // namespace

void sampling_probabilities(const cdz_sampling& sampling, const float* logits, float* probabilities,
                            int64_t count) {
    check_settings(sampling, count);
    const AllowedTokens allowed = allowed_tokens(sampling, count);
    std::fill(probabilities, probabilities + count, 0.0f);
    if (sampling.temperature == 0.0) {
        one_hot_argmax(allowed, logits, probabilities);
        return;
    }
    double total = tempered_exponentials(sampling, allowed, logits, probabilities);
    const int64_t keep_k = nucleus_size_limit(sampling, count);
    if (keep_k < count || sampling.top_p < 1.0)
        total = keep_nucleus(allowed, probabilities, total, keep_k, sampling.top_p);

    const float scale = static_cast<float>(1.0 / total);
    allowed.for_each([&](int64_t i) { probabilities[i] *= scale; });
}

int64_t sample_token(const cdz_sampling& sampling, const float* logits, float* scratch, int64_t count,
                     cdz_rng& rng) {
    check_settings(sampling, count);
    const AllowedTokens allowed = allowed_tokens(sampling, count);
    const int64_t keep_k = nucleus_size_limit(sampling, count);
    if (sampling.temperature > 0.0 && (keep_k < count || sampling.top_p < 1.0)) {
        const double total = tempered_exponentials(sampling, allowed, logits, scratch);
        const NucleusLimit limit{keep_k, sampling.top_p, sampling.top_p * total};
        if (const std::optional<size_t> kept = nucleus_among_likely(allowed, scratch, total, limit)) {
            // The kept entries of sampling_probabilities' row, and the draw
            // sample_index would make from it.
            Workspace& w = workspace();
            const auto n = static_cast<int64_t>(*kept);
            const float scale = static_cast<float>(1.0 / mass_of_kept(scratch, w, *kept));
            w.kept_values.resize(*kept);
            for (size_t r = 0; r < *kept; ++r) w.kept_values[r] = scratch[w.likely[r]] * scale;
            const auto* indices = reinterpret_cast<const int64_t*>(w.likely.data());
            const double target =
                random_stream_uniform(rng) * sparse_row_sum(indices, w.kept_values.data(), n, count);
            double cumulative = 0.0;
            for (int64_t r = 0; r < n; ++r) {
                cumulative += w.kept_values[static_cast<size_t>(r)];
                if (target < cumulative) return indices[r];
            }
            return indices[n - 1];
        }
    }
    sampling_probabilities(sampling, logits, scratch, count);
    return sample_index(rng, scratch, count);
}

void keep_sampling_nucleus(const cdz_sampling& sampling, float* probabilities, int64_t count) {
    check_settings(sampling, count);
    const AllowedTokens allowed = allowed_tokens(sampling, count);
    double total = 0.0;
    int64_t next = 0;
    allowed.for_each_run([&](int64_t first, int64_t n) {
        std::fill(probabilities + next, probabilities + first, 0.0f);
        next = first + n;
        if (!row_is_nonnegative_finite(probabilities + first, n))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: a probability is negative or not a finite number");
        total += row_sum(probabilities + first, n);
    });
    std::fill(probabilities + next, probabilities + count, 0.0f);
    if (!(total > 0.0)) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the allowed tokens have no probability mass");
    const int64_t keep_k = sampling.top_k > 0 && sampling.top_k < count ? sampling.top_k : count;
    if (keep_k < count || sampling.top_p < 1.0)
        total = keep_nucleus(allowed, probabilities, total, keep_k, sampling.top_p);
    const float scale = static_cast<float>(1.0 / total);
    allowed.for_each([&](int64_t i) { probabilities[i] *= scale; });
}

cdz_sampling restrict_sampling(const cdz_sampling& sampling, int64_t begin, int64_t end, int64_t extra) {
    cdz_sampling restricted = sampling;
    restricted.struct_size = sizeof(cdz_sampling);
    restricted.allowed_begin = begin;
    restricted.allowed_end = end;
    restricted.allowed_extra = extra;
    return restricted;
}

cdz_sampling restrict_sampling_to_audio(const cdz_sampling& sampling, const cdz_backbone_info& info) {
    int64_t begin = info.audio_token_offset, end = info.audio_token_offset + info.audio_token_count;
    if (info.phone_markers) {
        begin = std::min(begin, info.text_token_offset);
        end = std::max(end, info.text_token_offset + info.text_token_count);
    }
    return restrict_sampling(sampling, begin, end, info.end_token);
}

bool is_phone_marker(const cdz_backbone_info& info, int64_t token) {
    return info.phone_markers && token >= info.text_token_offset &&
           token < info.text_token_offset + info.text_token_count;
}

bool is_audio_token(const cdz_backbone_info& info, int64_t token) {
    return token >= info.audio_token_offset && token < info.audio_token_offset + info.audio_token_count;
}

int64_t sample_index(cdz_rng& rng, const float* probabilities, int64_t count) {
    const double total = row_sum(probabilities, count);
    const double target = random_stream_uniform(rng) * total;
    double cumulative = 0.0;
    int64_t last_nonzero = 0;
    for (int64_t i = 0; i < count; ++i) {
        if (probabilities[i] <= 0.0f) continue;
        cumulative += probabilities[i];
        last_nonzero = i;
        if (target < cumulative) return i;
    }
    return last_nonzero;
}

}  // namespace cadenza
