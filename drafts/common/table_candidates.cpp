#include "table_candidates.h"

#include <algorithm>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "draft_support.h"

namespace cadenza::drafts {
namespace {

// Sixteen partial sums, so that the compiler can keep them in vector lanes
// (a single float sum is a chain of dependent adds).
float dot(const float* a, const float* b, int64_t n) {
    constexpr int64_t lanes = 16;
    float partial[lanes] = {};
    int64_t j = 0;
    for (; j + lanes <= n; j += lanes)
        for (int64_t k = 0; k < lanes; ++k) partial[k] += a[j + k] * b[j + k];
    for (; j < n; ++j) partial[j % lanes] += a[j] * b[j];
    float sum = 0.0f;
    for (const float value : partial) sum += value;
    return sum;
}

}  // namespace

TableCandidates::TableCandidates(const float* table, int64_t vocab, int64_t hidden, int64_t count)
    : table_(table), vocab_(vocab), hidden_(hidden), count_(count) {
    if (!table || vocab < 1 || hidden < 1 || count < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "table candidates need a table and a positive count");
    tokens_.reserve(static_cast<size_t>(count));
    logits_.reserve(static_cast<size_t>(count));
    probabilities_.reserve(static_cast<size_t>(count));
}

void TableCandidates::score(const CodeDigitDistribution& digits, const float* head_logits, const float* state,
                            const cdz_sampling* sampling) {
    if (digits.grid().vocab_size != vocab_)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the code-digit head's vocabulary differs from the table's");
    digits.most_likely_tokens(head_logits, sampling, count_, tokens_, beam_);
    if (tokens_.empty()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the sampling settings allow no token");
    const auto count = static_cast<int64_t>(tokens_.size());
    // The candidates' rows are scattered over the table: ask for all of them
    // before the first dot product needs one.
    for (const int32_t token : tokens_) {
        const char* row = reinterpret_cast<const char*>(table_ + static_cast<int64_t>(token) * hidden_);
        for (int64_t byte = 0; byte < hidden_ * static_cast<int64_t>(sizeof(float)); byte += 64)
            __builtin_prefetch(row + byte);
    }
    logits_.resize(static_cast<size_t>(count));
    probabilities_.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
        logits_[static_cast<size_t>(i)] =
            dot(table_ + static_cast<int64_t>(tokens_[static_cast<size_t>(i)]) * hidden_, state, hidden_);
    // The candidates are already the allowed tokens: the sampling over them restricts nothing more.
    cdz_sampling over_candidates{sizeof(cdz_sampling), 1.0, 0, 1.0, 0, 0, -1};
    if (sampling) over_candidates = *sampling;
    over_candidates.allowed_begin = over_candidates.allowed_end = 0;
    over_candidates.allowed_extra = -1;
    sampling_probabilities(&over_candidates, logits_.data(), probabilities_.data(), count);
}

void TableCandidates::fill_row(const CodeDigitDistribution& digits, const float* head_logits, const float* state,
                               const cdz_sampling* sampling, float* out) {
    score(digits, head_logits, state, sampling);
    std::fill(out, out + vocab_, 0.0f);
    for (size_t i = 0; i < tokens_.size(); ++i) out[tokens_[i]] = probabilities_[i];
}

int32_t TableCandidates::most_likely(const CodeDigitDistribution& digits, const float* head_logits,
                                     const float* state, const cdz_sampling* sampling, float* probability) {
    score(digits, head_logits, state, sampling);
    size_t best = 0;
    for (size_t i = 1; i < tokens_.size(); ++i)
        if (probabilities_[i] > probabilities_[best] ||
            (probabilities_[i] == probabilities_[best] && tokens_[i] < tokens_[best]))
            best = i;
    *probability = probabilities_[best];
    return tokens_[best];
}

}  // namespace cadenza::drafts
