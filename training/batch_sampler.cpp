#include "batch_sampler.h"

#include <algorithm>

#include "error.h"
#include "random_bits.h"

namespace cadenza::training {
namespace {

struct Window {
    const TokenSequence* sequence;
    int64_t begin;
};

Batch make_batch(const std::vector<Window>& windows, int64_t seq_len) {
    int64_t width = 2;
    for (const auto& w : windows)
        width = std::max(width, std::min(seq_len + 1, static_cast<int64_t>(w.sequence->tokens.size()) - w.begin));
    const auto rows = static_cast<int64_t>(windows.size());
    at::Tensor tokens = at::zeros({rows, width}, at::kLong);
    at::Tensor trained = at::zeros({rows, width}, at::kBool);
    at::Tensor real = at::zeros({rows, width}, at::kBool);
    auto t = tokens.accessor<int64_t, 2>();
    auto m = trained.accessor<bool, 2>();
    auto r = real.accessor<bool, 2>();
    for (int64_t row = 0; row < rows; ++row) {
        const auto& w = windows[static_cast<size_t>(row)];
        const auto length = static_cast<int64_t>(w.sequence->tokens.size());
        for (int64_t i = 0; i < width && w.begin + i < length; ++i) {
            t[row][i] = w.sequence->tokens[static_cast<size_t>(w.begin + i)];
            m[row][i] = w.begin + i >= w.sequence->prompt_length;
            r[row][i] = true;
        }
    }
    Batch batch;
    batch.tokens = tokens;
    batch.trained = trained;
    batch.real = real;
    batch.sequences = rows;
    return batch;
}

}  // namespace

at::Tensor Batch::labels(int64_t ahead) const {
    const int64_t rows = tokens.size(0), time = this->time();
    at::Tensor labels = at::full({rows, time}, ignore_label, at::kLong);
    if (ahead < 1 || ahead > time) return labels;
    const at::Tensor shifted = tokens.slice(1, ahead, time + 1);  // [B, T + 1 - ahead]
    const at::Tensor keep = trained.slice(1, ahead, time + 1);
    labels.slice(1, 0, time + 1 - ahead).copy_(at::where(keep, shifted, at::full_like(shifted, ignore_label)));
    return labels;
}

int64_t Batch::input_tokens() const { return real.slice(1, 0, time()).sum().item<int64_t>(); }

uint64_t Batch::fingerprint() const {
    const at::Tensor contiguous = tokens.to(at::kCPU, at::kLong).contiguous();
    const int64_t* data = contiguous.data_ptr<int64_t>();
    uint64_t hash = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < contiguous.numel(); ++i) {
        hash ^= static_cast<uint64_t>(data[i]);
        hash *= 0x100000001b3ull;
    }
    return hash;
}

BatchSampler::BatchSampler(std::vector<const TokenSequence*> sequences, int64_t batch, int64_t seq_len, uint64_t seed,
                           bool length_buckets)
    : sequences_(std::move(sequences)), length_buckets_(length_buckets), batch_(batch), seq_len_(seq_len), seed_(seed) {
    if (sequences_.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "no training sequences");
    if (batch < 1 || seq_len < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "batch and sequence length must be positive");
    if (length_buckets_)
        std::stable_sort(sequences_.begin(), sequences_.end(), [](const TokenSequence* a, const TokenSequence* b) {
            return a->tokens.size() < b->tokens.size();
        });
}

Batch BatchSampler::at_step(int64_t step) const {
    SplitMix64 random(derive_seed(seed_, static_cast<uint64_t>(step)));
    std::vector<Window> windows;
    windows.reserve(static_cast<size_t>(batch_));
    size_t first = 0, count = sequences_.size();
    if (length_buckets_) {
        const size_t anchor = random.below(sequences_.size());
        count = std::min(sequences_.size(), static_cast<size_t>(16 * batch_));
        first = std::min(anchor - std::min(anchor, count / 2), sequences_.size() - count);
    }
    for (int64_t row = 0; row < batch_; ++row) {
        const TokenSequence* sequence = sequences_[first + random.below(count)];
        const auto length = static_cast<int64_t>(sequence->tokens.size());
        const int64_t starts = std::max<int64_t>(1, length - seq_len_);  // windows of seq_len + 1 tokens
        windows.push_back({sequence, static_cast<int64_t>(random.below(static_cast<uint64_t>(starts)))});
    }
    return make_batch(windows, seq_len_);
}

std::vector<Batch> evaluation_batches(const std::vector<const TokenSequence*>& sequences, int64_t batch,
                                      int64_t seq_len) {
    std::vector<Window> windows;
    for (const TokenSequence* sequence : sequences) {
        const auto length = static_cast<int64_t>(sequence->tokens.size());
        for (int64_t begin = 0; begin + 1 < length; begin += seq_len) windows.push_back({sequence, begin});
    }
    std::vector<Batch> batches;
    for (size_t i = 0; i < windows.size(); i += static_cast<size_t>(batch)) {
        const size_t end = std::min(windows.size(), i + static_cast<size_t>(batch));
        batches.push_back(make_batch(std::vector<Window>(windows.begin() + i, windows.begin() + end), seq_len));
    }
    return batches;
}

}  // namespace cadenza::training
