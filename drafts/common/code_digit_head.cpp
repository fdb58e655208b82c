#include "code_digit_head.h"

#include <ATen/core/Reduction.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "draft_support.h"
#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::drafts {
namespace {

void log_softmax_in_place(float* values, int64_t count) {
    float largest = values[0];
    for (int64_t i = 1; i < count; ++i) largest = std::max(largest, values[i]);
    float sum = 0.0f;
    for (int64_t i = 0; i < count; ++i) sum += std::exp(values[i] - largest);
    const float shift = largest + std::log(sum);
    for (int64_t i = 0; i < count; ++i) values[i] -= shift;
}

// Probabilities of one factor's logits in place, under the sampling
// settings: entries with allowed[i] false get 0. At least one entry must be
// allowed.
void factor_probabilities(float* values, int64_t count, const bool* allowed, const cdz_sampling& s) {
    int64_t best = -1;
    for (int64_t i = 0; i < count; ++i)
        if (allowed[i] && (best < 0 || values[i] > values[best])) best = i;
    if (s.temperature <= 0) {
        for (int64_t i = 0; i < count; ++i) values[i] = i == best ? 1.0f : 0.0f;
        return;
    }
    const auto inverse = static_cast<float>(1.0 / s.temperature);
    const float largest = values[best];
    float sum = 0.0f;
    for (int64_t i = 0; i < count; ++i) {
        values[i] = allowed[i] ? std::exp((values[i] - largest) * inverse) : 0.0f;
        sum += values[i];
    }
    for (int64_t i = 0; i < count; ++i) values[i] /= sum;
    const bool top_k = s.top_k > 0 && s.top_k < count, top_p = s.top_p < 1.0;
    if (!top_k && !top_p) return;
    // A factor has at most a few dozen entries: their indices by descending
    // value, ties in index order, by insertion (std::stable_sort allocated a
    // buffer for every factor of every drafted row).
    int64_t order[256];
    const int64_t sorted = std::min<int64_t>(count, 256);
    for (int64_t i = 0; i < sorted; ++i) {
        int64_t j = i;
        for (; j > 0 && values[order[j - 1]] < values[i]; --j) order[j] = order[j - 1];
        order[j] = i;
    }
    int64_t kept = top_k ? std::min<int64_t>(s.top_k, sorted) : sorted;
    if (top_p) {
        double mass = 0.0;
        for (int64_t r = 0; r < kept; ++r) {
            mass += values[order[r]];
            if (mass >= s.top_p) {
                kept = r + 1;
                break;
            }
        }
    }
    float kept_mass = 0.0f;
    for (int64_t r = 0; r < kept; ++r) kept_mass += values[order[r]];
    for (int64_t r = kept; r < sorted; ++r) values[order[r]] = 0.0f;
    for (int64_t r = 0; r < kept; ++r) values[order[r]] /= kept_mass;
}

}  // namespace

DigitSampling digit_sampling_of(const sdk::Params& params) {
    const std::string rule = params.string(digit_sampling_param.name);
    if (rule == "row") return DigitSampling::row;
    if (rule == "tempered") return DigitSampling::tempered;
    return rule == "nucleus" ? DigitSampling::nucleus : DigitSampling::factors;
}

int64_t CodeGrid::code_count() const {
    int64_t product = 1;
    for (const int64_t level : levels) product *= level;
    return levels.empty() ? 0 : product;
}

int64_t CodeGrid::digit_logit_count() const {
    int64_t sum = 0;
    for (const int64_t level : levels) sum += level;
    return sum;
}

std::string CodeGrid::levels_text() const {
    std::ostringstream text;
    for (size_t i = 0; i < levels.size(); ++i) text << (i ? "," : "") << levels[i];
    return text.str();
}

CodeGrid CodeGrid::parse(const std::string& levels, int64_t code_offset, int64_t vocab_size, const std::string& where) {
    CodeGrid grid;
    grid.code_offset = code_offset;
    grid.vocab_size = vocab_size;
    std::stringstream text(levels);
    std::string item;
    int64_t product = 1;
    while (std::getline(text, item, ',')) {
        size_t used = 0;
        long long level = 0;
        try {
            level = std::stoll(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != item.size() || level < 2 || level > 65536)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": code levels '" + levels +
                                                       "': each level must be an integer from 2 to 65536");
        product *= level;
        if (product > vocab_size)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": code levels '" + levels + "' make more codes than the " +
                                                       std::to_string(vocab_size) + " tokens of the vocabulary");
        grid.levels.push_back(level);
    }
    if (grid.levels.empty())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": code levels '" + levels + "': no level");
    if (code_offset < 0 || code_offset + product > vocab_size)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": " + std::to_string(product) + " codes from token " +
                                                   std::to_string(code_offset) + " do not fit a vocabulary of " +
                                                   std::to_string(vocab_size));
    return grid;
}

std::optional<CodeGrid> code_grid_of(const std::map<std::string, std::string>& metadata, int64_t vocab_size,
                                     const std::string& where) {
    const auto output = metadata.find("cadenza.output");
    if (output == metadata.end() || output->second == "vocabulary") return std::nullopt;
    if (output->second != "code_digits")
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata cadenza.output = '" + output->second +
                                                   "' (expected 'vocabulary' or 'code_digits')");
    const auto levels = metadata.find("cadenza.code_levels");
    const auto offset = metadata.find("cadenza.code_offset");
    if (levels == metadata.end() || offset == metadata.end())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    where + ": code-digit heads need metadata cadenza.code_levels and cadenza.code_offset");
    size_t used = 0;
    long long first = -1;
    try {
        first = std::stoll(offset->second, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != offset->second.size() || first < 0)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata cadenza.code_offset = '" + offset->second +
                                                   "' is not a non-negative integer");
    return CodeGrid::parse(levels->second, first, vocab_size, where);
}

std::vector<std::pair<std::string, std::string>> code_grid_metadata(const CodeGrid& grid) {
    return {{"cadenza.output", "code_digits"},
            {"cadenza.code_levels", grid.levels_text()},
            {"cadenza.code_offset", std::to_string(grid.code_offset)}};
}

CodeDigitDistribution::CodeDigitDistribution(CodeGrid grid) : grid_(std::move(grid)) {
    int64_t begin = 0;
    for (const int64_t level : grid_.levels) {
        digit_begin_.push_back(begin);
        begin += level;
    }
}

at::Tensor CodeDigitDistribution::log_probabilities(const at::Tensor& head_logits) const {
    const int64_t classes = grid_.class_count();
    const at::Tensor class_lp = at::log_softmax(head_logits.narrow(-1, 0, classes), -1);
    // Codes by expanding one digit at a time, most significant first: after
    // digit d the last axis holds every prefix of digits D-1..d, so the final
    // index is sum_d digit_d * prod_{e<d} levels[e], the code itself.
    at::Tensor codes = class_lp.narrow(-1, classes - 1, 1);
    for (size_t d = grid_.levels.size(); d-- > 0;) {
        const at::Tensor digit_lp =
            at::log_softmax(head_logits.narrow(-1, classes + digit_begin_[d], grid_.levels[d]), -1);
        codes = (codes.unsqueeze(-1) + digit_lp.unsqueeze(-2)).flatten(-2);
    }
    const int64_t offset = grid_.code_offset;
    return at::cat({class_lp.narrow(-1, 0, offset), codes, class_lp.narrow(-1, offset, grid_.other_count() - offset)},
                   -1);
}

at::Tensor CodeDigitDistribution::negative_log_likelihood(const at::Tensor& head_logits,
                                                          const at::Tensor& labels) const {
    const int64_t classes = grid_.class_count(), offset = grid_.code_offset, count = grid_.code_count();
    const at::Tensor is_code = labels.ge(offset) & labels.lt(offset + count);
    const at::Tensor class_index =
        at::where(is_code, at::full_like(labels, classes - 1), at::where(labels.lt(offset), labels, labels - count));
    at::Tensor nll = at::cross_entropy_loss(head_logits.narrow(-1, 0, classes), class_index, {}, at::Reduction::None);
    const at::Tensor code = (labels - offset).clamp(0, count - 1);
    const at::Tensor weight = is_code.to(nll.scalar_type());
    int64_t place = 1;
    for (size_t d = 0; d < grid_.levels.size(); ++d) {
        const at::Tensor digit = at::remainder(at::floor_divide(code, place), grid_.levels[d]);
        const at::Tensor logits = head_logits.narrow(-1, classes + digit_begin_[d], grid_.levels[d]);
        nll = nll + weight * at::cross_entropy_loss(logits, digit, {}, at::Reduction::None);
        place *= grid_.levels[d];
    }
    return nll;
}

at::Tensor CodeDigitDistribution::block_log_softmax(const at::Tensor& head_logits) const {
    const int64_t classes = grid_.class_count();
    std::vector<at::Tensor> blocks{at::log_softmax(head_logits.narrow(-1, 0, classes), -1)};
    for (size_t d = 0; d < grid_.levels.size(); ++d)
        blocks.push_back(at::log_softmax(head_logits.narrow(-1, classes + digit_begin_[d], grid_.levels[d]), -1));
    return at::cat(blocks, -1);
}

at::Tensor CodeDigitDistribution::marginals(const at::Tensor& probabilities) const {
    const int64_t offset = grid_.code_offset, count = grid_.code_count();
    const at::Tensor& p = probabilities;
    const at::Tensor code_p = p.narrow(1, offset, count);
    std::vector<at::Tensor> blocks{p.narrow(1, 0, offset), p.narrow(1, offset + count, grid_.vocab_size - offset - count),
                                   code_p.sum(1, true)};
    // The codes' probabilities as a grid, most significant digit first (axis
    // 1 is digit D-1, axis D is digit 0); a digit's marginal sums the others.
    std::vector<int64_t> shape{p.size(0)};
    for (size_t d = grid_.levels.size(); d-- > 0;) shape.push_back(grid_.levels[d]);
    const at::Tensor grid_p = code_p.reshape(shape);
    const auto digits = static_cast<int64_t>(grid_.levels.size());
    for (int64_t d = 0; d < digits; ++d) {
        std::vector<int64_t> others;
        for (int64_t axis = 1; axis <= digits; ++axis)
            if (axis != digits - d) others.push_back(axis);
        blocks.push_back(others.empty() ? grid_p : grid_p.sum(others));
    }
    return at::cat(blocks, 1);
}

at::Tensor CodeDigitDistribution::cross_entropy(const at::Tensor& head_logits, const at::Tensor& teacher_marginals) const {
    return -(teacher_marginals * block_log_softmax(head_logits)).sum(-1);
}

template <typename Combine>
void CodeDigitDistribution::write_row(const float* factors, float* out, Combine combine) const {
    const int64_t classes = grid_.class_count(), offset = grid_.code_offset;
    std::copy(factors, factors + offset, out);
    std::copy(factors + offset, factors + classes - 1, out + offset + grid_.code_count());
    // The codes in place, most significant digit first (see
    // log_probabilities): block i of the next level starts at i * level >= i,
    // so walking i downwards reads each prefix before anything overwrites it.
    float* codes = out + offset;
    codes[0] = factors[classes - 1];
    int64_t size = 1;
    for (size_t d = grid_.levels.size(); d-- > 0;) {
        const int64_t level = grid_.levels[d];
        const float* digit = factors + classes + digit_begin_[d];
        for (int64_t i = size; i-- > 0;) {
            const float prefix = codes[i];
            float* block = codes + i * level;
            for (int64_t k = 0; k < level; ++k) block[k] = combine(prefix, digit[k]);
        }
        size *= level;
    }
}

void CodeDigitDistribution::fill_log_factors(const float* head_logits, float* out) const {
    const int64_t classes = grid_.class_count();
    std::copy(head_logits, head_logits + grid_.head_rows(), out);
    log_softmax_in_place(out, classes);
    for (size_t d = 0; d < grid_.levels.size(); ++d) log_softmax_in_place(out + classes + digit_begin_[d], grid_.levels[d]);
}

void CodeDigitDistribution::fill_log_probabilities(const float* head_logits, float* out, float* scratch) const {
    fill_log_factors(head_logits, scratch);
    write_row(scratch, out, [](float prefix, float digit) { return prefix + digit; });
}

void CodeDigitDistribution::most_likely_tokens(const float* head_logits, const cdz_sampling* sampling, int64_t count,
                                               std::vector<int32_t>& tokens, TokenBeam& beam) const {
    const int64_t vocab = grid_.vocab_size, classes = grid_.class_count(), offset = grid_.code_offset,
                  codes = grid_.code_count();
    const TokenRange allowed = allowed_tokens(sampling, vocab);
    // The better entry first: the larger log q, then the lower token (or prefix).
    const auto better = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    const auto keep_best = [&](std::vector<std::pair<float, int64_t>>& entries) {
        if (static_cast<int64_t>(entries.size()) <= count) return;
        std::nth_element(entries.begin(), entries.begin() + (count - 1), entries.end(), better);
        entries.resize(static_cast<size_t>(count));
    };
    const bool all_codes = allowed.begin <= offset && offset + codes <= allowed.end;
    const bool no_code = allowed.end <= offset || allowed.begin >= offset + codes;
    auto& kept = beam.kept;
    kept.clear();
    if (!all_codes && !no_code) {
        beam.row.resize(static_cast<size_t>(vocab));
        beam.factors.resize(static_cast<size_t>(grid_.head_rows()));
        fill_log_probabilities(head_logits, beam.row.data(), beam.factors.data());
        for (int64_t t = 0; t < vocab; ++t)
            if (allowed.contains(t)) kept.emplace_back(beam.row[static_cast<size_t>(t)], t);
    } else {
        beam.factors.resize(static_cast<size_t>(grid_.head_rows()));
        fill_log_factors(head_logits, beam.factors.data());
        const float* factors = beam.factors.data();
        if (all_codes) {
            // Prefixes of the most significant digits, extended one digit at
            // a time as write_row extends them: code = prefix * level + digit.
            kept.emplace_back(factors[classes - 1], 0);
            for (size_t d = grid_.levels.size(); d-- > 0;) {
                const int64_t level = grid_.levels[d];
                const float* digit = factors + classes + digit_begin_[d];
                beam.grown.clear();
                // With `count` prefixes kept, each one's best extension is in
                // the beam's reach, so the count-th best extension is at least
                // the worst prefix's best one: anything below it is dropped
                // before the selection (ties stay, as the order needs them).
                float floor = -std::numeric_limits<float>::infinity();
                if (static_cast<int64_t>(kept.size()) >= count) {
                    const float best_digit = *std::max_element(digit, digit + level);
                    floor = std::numeric_limits<float>::infinity();
                    for (const auto& entry : kept) floor = std::min(floor, entry.first + best_digit);
                }
                for (const auto& [value, prefix] : kept)
                    for (int64_t k = 0; k < level; ++k) {
                        const float extended = value + digit[k];
                        if (extended >= floor) beam.grown.emplace_back(extended, prefix * level + k);
                    }
                keep_best(beam.grown);
                kept.swap(beam.grown);
            }
            for (auto& entry : kept) entry.second += offset;
        }
        for (int64_t c = 0; c + 1 < classes; ++c) {
            const int64_t token = c < offset ? c : c + codes;
            if (allowed.contains(token)) kept.emplace_back(factors[c], token);
        }
    }
    keep_best(kept);
    tokens.clear();
    for (const auto& entry : kept) tokens.push_back(static_cast<int32_t>(entry.second));
    std::sort(tokens.begin(), tokens.end());
}

bool CodeDigitDistribution::prepare_factors(const float* head_logits, const cdz_sampling& sampling,
                                            float* scratch) const {
    const int64_t classes = grid_.class_count(), offset = grid_.code_offset, count = grid_.code_count();
    const int64_t vocab = grid_.vocab_size;
    if (!std::isfinite(sampling.temperature) || sampling.temperature < 0 || !(sampling.top_p > 0 && sampling.top_p <= 1) ||
        sampling.top_k < 0)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "sampling settings out of range (temperature >= 0, 0 < top_p <= 1, top_k >= 0)");
    if (sampling_ == DigitSampling::row || classes > 1024) return false;
    const bool tempered_factors = sampling_ == DigitSampling::nucleus || sampling_ == DigitSampling::tempered;
    if (tempered_factors && sampling.temperature == 0) return false;
    for (const int64_t level : grid_.levels)
        if (level > 256) return false;
    const TokenRange allowed = allowed_tokens(&sampling, vocab);
    const bool all_codes = allowed.begin <= offset && offset + count <= allowed.end;
    const bool no_code = allowed.end <= offset || allowed.begin >= offset + count;
    if (!all_codes && !no_code) return false;
    // The class mask: the non-code tokens in vocabulary order, then "a code".
    bool class_allowed[1024];
    bool any = false;
    for (int64_t c = 0; c + 1 < classes; ++c) {
        const int64_t token = c < offset ? c : c + count;
        any |= class_allowed[c] = allowed.contains(token);
    }
    any |= class_allowed[classes - 1] = all_codes;
    if (!any) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the sampling settings allow no token");
    // `nucleus` and `tempered` temper the factors alone: top-k and top-p act
    // on the product, or not at all.
    cdz_sampling factor_sampling = sampling;
    std::copy(head_logits, head_logits + grid_.head_rows(), scratch);
    if (tempered_factors) {
        factor_sampling.top_k = 0;
        factor_sampling.top_p = 1.0;
    }
    if (sampling.temperature > 0) {
        // The temperature of the whole row gives the codes together the mass
        // q(code)^(1/T) prod_d Z_d, Z_d = sum_k q_d(k)^(1/T), against a
        // non-code token's q(t)^(1/T): the class "a code" gets log Z_d in
        // logit units, so that the tempered factors multiply out to the
        // tempered row exactly (without it, at T < 1 the codes took mass
        // from the phone markers and the end token).
        const double inverse = 1.0 / sampling.temperature;
        double log_z = 0.0;
        for (size_t d = 0; d < grid_.levels.size(); ++d) {
            const float* digit = scratch + classes + digit_begin_[d];
            const int64_t level = grid_.levels[d];
            const float largest = *std::max_element(digit, digit + level);
            double plain = 0.0, tempered = 0.0;
            for (int64_t k = 0; k < level; ++k) {
                plain += std::exp(static_cast<double>(digit[k] - largest));
                tempered += std::exp(static_cast<double>(digit[k] - largest) * inverse);
            }
            log_z += std::log(tempered) - inverse * std::log(plain);
        }
        scratch[classes - 1] += static_cast<float>(sampling.temperature * log_z);
    }
    factor_probabilities(scratch, classes, class_allowed, factor_sampling);
    for (size_t d = 0; d < grid_.levels.size(); ++d) {
        bool digit_allowed[256];
        const int64_t level = grid_.levels[d];
        std::fill(digit_allowed, digit_allowed + level, true);
        factor_probabilities(scratch + classes + digit_begin_[d], level, digit_allowed, factor_sampling);
    }
    return true;
}

bool CodeDigitDistribution::fill_probabilities(const float* head_logits, const cdz_sampling& sampling, float* out,
                                               float* scratch) const {
    if (!prepare_factors(head_logits, sampling, scratch)) return false;
    write_row(scratch, out, [](float prefix, float digit) { return prefix * digit; });
    if (sampling_ == DigitSampling::nucleus && (sampling.top_p < 1.0 || sampling.top_k > 0))
        sampling_nucleus(&sampling, out, grid_.vocab_size);
    return true;
}

bool CodeDigitDistribution::most_likely(const float* head_logits, const cdz_sampling& sampling, float* scratch,
                                        int64_t* token, float* probability) const {
    // `nucleus` rescales the written row, which can make two entries equal.
    constexpr size_t max_digits = 64;
    if (sampling_ == DigitSampling::nucleus || grid_.levels.size() > max_digits) return false;
    if (!prepare_factors(head_logits, sampling, scratch)) return false;
    const int64_t classes = grid_.class_count(), offset = grid_.code_offset, count = grid_.code_count();
    // The code of every digit's most likely value (the lowest on a tie, so
    // the lowest such code), its product formed as write_row forms it: the
    // class "a code", then the digits from the most significant.
    float code_value = scratch[classes - 1];
    int64_t code = 0;
    int64_t best[max_digits];
    for (size_t d = 0; d < grid_.levels.size(); ++d) {
        const float* digit = scratch + classes + digit_begin_[d];
        const int64_t level = grid_.levels[d];
        int64_t top = 0;
        for (int64_t k = 1; k < level; ++k)
            if (digit[k] > digit[top]) top = k;
        // A second value within rounding of the first could make another
        // code's product round to the same float, and an earlier code win.
        for (int64_t k = 0; k < level; ++k)
            if (k != top && digit[k] > 0.0f && digit[k] >= digit[top] * (1.0f - 1e-5f)) return false;
        best[d] = top;
    }
    int64_t stride = 1;
    for (size_t d = 0; d < grid_.levels.size(); ++d) {
        code += best[d] * stride;
        stride *= grid_.levels[d];
    }
    for (size_t d = grid_.levels.size(); d-- > 0;) code_value = code_value * scratch[classes + digit_begin_[d] + best[d]];
    // The row's first largest entry, in vocabulary order: the non-code
    // tokens before the codes, the code, the non-code tokens after them.
    int64_t winner = -1;
    float value = 0.0f;
    auto consider = [&](int64_t candidate, float candidate_value) {
        if (winner < 0 || candidate_value > value) {
            winner = candidate;
            value = candidate_value;
        }
    };
    for (int64_t c = 0; c < offset && c + 1 < classes; ++c) consider(c, scratch[c]);
    consider(offset + code, code_value);
    for (int64_t c = offset; c + 1 < classes; ++c) consider(c + count, scratch[c]);
    *token = winner;
    *probability = value;
    return true;
}

}  // namespace cadenza::drafts
