#include "table_candidates.h"

#include <algorithm>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"
#include "draft_support.h"

namespace cadenza::drafts {
namespace {

// The heap keeps the worst candidate on top: the lower value, then the higher token.
bool better(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

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
    heap_.reserve(static_cast<size_t>(count));
    tokens_.reserve(static_cast<size_t>(count));
    logits_.reserve(static_cast<size_t>(count));
    probabilities_.reserve(static_cast<size_t>(count));
}

void TableCandidates::select(const float* head_log_row, const cdz_sampling* sampling) {
    const TokenRange allowed = allowed_tokens(sampling, vocab_);
    heap_.clear();
    auto consider = [&](int64_t token) {
        const std::pair<float, int32_t> entry{head_log_row[token], static_cast<int32_t>(token)};
        if (static_cast<int64_t>(heap_.size()) < count_) {
            heap_.push_back(entry);
            std::push_heap(heap_.begin(), heap_.end(), better);
        } else if (better(entry, heap_.front())) {
            std::pop_heap(heap_.begin(), heap_.end(), better);
            heap_.back() = entry;
            std::push_heap(heap_.begin(), heap_.end(), better);
        }
    };
    for (int64_t t = allowed.begin; t < allowed.end; ++t) consider(t);
    if (allowed.extra >= 0 && !(allowed.extra >= allowed.begin && allowed.extra < allowed.end)) consider(allowed.extra);
    if (heap_.empty()) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the sampling settings allow no token");
    // Vocabulary order, so that the row and the draws do not depend on the heap's layout.
    tokens_.clear();
    for (const auto& entry : heap_) tokens_.push_back(entry.second);
    std::sort(tokens_.begin(), tokens_.end());
}

void TableCandidates::fill_row(const float* head_log_row, const float* state, const cdz_sampling* sampling,
                               float* out) {
    select(head_log_row, sampling);
    const auto count = static_cast<int64_t>(tokens_.size());
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
    std::fill(out, out + vocab_, 0.0f);
    for (int64_t i = 0; i < count; ++i) out[tokens_[static_cast<size_t>(i)]] = probabilities_[static_cast<size_t>(i)];
}

}  // namespace cadenza::drafts
