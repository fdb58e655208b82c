#include "sampling.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "error.h"
#include "random_stream.h"

namespace cadenza {

void sampling_probabilities(const cdz_sampling& sampling, const float* logits, float* probabilities,
                            int64_t count) {
    if (count <= 0) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling over an empty distribution");
    if (!(sampling.temperature >= 0.0) || !std::isfinite(sampling.temperature))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "temperature must be finite and >= 0, got " + std::to_string(sampling.temperature));
    if (!(sampling.top_p > 0.0 && sampling.top_p <= 1.0))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "top_p must be in (0, 1], got " + std::to_string(sampling.top_p));
    if (sampling.top_k < 0)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "top_k must be >= 0");

    // Restriction to the allowed tokens, by copying only their logits.
    std::vector<float> restricted;
    if (sampling.struct_size >= sizeof(cdz_sampling) && sampling.allowed_end > 0) {
        if (sampling.allowed_begin < 0 || sampling.allowed_begin >= sampling.allowed_end || sampling.allowed_end > count ||
            sampling.allowed_extra >= count)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling: the allowed token range does not fit the vocabulary");
        restricted.assign(static_cast<size_t>(count), -std::numeric_limits<float>::infinity());
        std::copy(logits + sampling.allowed_begin, logits + sampling.allowed_end, restricted.begin() + sampling.allowed_begin);
        if (sampling.allowed_extra >= 0) restricted[sampling.allowed_extra] = logits[sampling.allowed_extra];
        logits = restricted.data();
    }

    if (sampling.temperature == 0.0) {
        const int64_t best = std::max_element(logits, logits + count) - logits;
        std::fill(probabilities, probabilities + count, 0.0f);
        probabilities[best] = 1.0f;
        return;
    }

    const float max_logit = *std::max_element(logits, logits + count);
    const double inverse_temperature = 1.0 / sampling.temperature;
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        const double p = std::exp((static_cast<double>(logits[i]) - max_logit) * inverse_temperature);
        probabilities[i] = static_cast<float>(p);
        total += p;
    }

    const bool use_top_k = sampling.top_k > 0 && sampling.top_k < count;
    const bool use_top_p = sampling.top_p < 1.0;
    if (use_top_k || use_top_p) {
        std::vector<int64_t> order(static_cast<size_t>(count));
        std::iota(order.begin(), order.end(), 0);
        const int64_t keep_k = use_top_k ? sampling.top_k : count;
        // Ties break by index so the kept set is deterministic.
        auto by_probability = [&](int64_t a, int64_t b) {
            return probabilities[a] != probabilities[b] ? probabilities[a] > probabilities[b] : a < b;
        };
        std::partial_sort(order.begin(), order.begin() + keep_k, order.end(), by_probability);
        int64_t kept = keep_k;
        if (use_top_p) {
            double cumulative = 0.0;
            for (int64_t r = 0; r < keep_k; ++r) {
                cumulative += probabilities[order[r]] / total;
                if (cumulative >= sampling.top_p) {
                    kept = r + 1;
                    break;
                }
            }
        }
        for (int64_t r = kept; r < count; ++r) probabilities[order[r]] = 0.0f;
        total = 0.0;
        for (int64_t r = 0; r < kept; ++r) total += probabilities[order[r]];
    }

    const double scale = 1.0 / total;
    for (int64_t i = 0; i < count; ++i) probabilities[i] = static_cast<float>(probabilities[i] * scale);
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
    double total = 0.0;
    for (int64_t i = 0; i < count; ++i) total += probabilities[i];
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
