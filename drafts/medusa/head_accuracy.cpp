#include "head_accuracy.h"

#include <algorithm>

#include <c10/core/InferenceMode.h>

namespace cadenza::medusa {

double HeadAccuracy::top(size_t head, int64_t k) const {
    if (head >= hits.size() || positions[head] == 0) return 0.0;
    int64_t total = 0;
    for (int64_t r = 0; r < std::min(k, ranks); ++r) total += hits[head][static_cast<size_t>(r)];
    return static_cast<double>(total) / static_cast<double>(positions[head]);
}

RankAccuracy HeadAccuracy::rank_accuracy(int64_t top_k) const {
    RankAccuracy accuracy(hits.size());
    for (size_t i = 0; i < hits.size(); ++i)
        for (int64_t r = 0; r < top_k; ++r)
            accuracy[i].push_back(positions[i] == 0 || r >= ranks ? 0.0
                                                                  : static_cast<double>(hits[i][static_cast<size_t>(r)]) /
                                                                        static_cast<double>(positions[i]));
    return accuracy;
}

HeadAccuracy measure_head_accuracy(const llama::LlamaModel& target, const drafts::DraftHeads& heads,
                                   const std::vector<CorpusSequence>& corpus, int64_t ranks, int64_t max_positions) {
    c10::InferenceMode inference;
    constexpr int64_t chunk = 128;  // rows of logits at a time
    const int64_t n = heads.count();
    HeadAccuracy result;
    result.ranks = ranks;
    result.hits.assign(static_cast<size_t>(n), std::vector<int64_t>(static_cast<size_t>(ranks), 0));
    result.positions.assign(static_cast<size_t>(n), 0);
    for (const auto& sequence : corpus) {
        const int64_t length = std::min<int64_t>(static_cast<int64_t>(sequence.tokens.size()), max_positions);
        if (length < 3) continue;
        const at::Tensor ids =
            at::tensor(std::vector<int64_t>(sequence.tokens.begin(), sequence.tokens.begin() + length), at::kLong);
        const at::Tensor hidden = target.forward_sequence(ids.unsqueeze(0))[0];  // [T, H]
        const auto prompt = static_cast<int64_t>(sequence.prompt_length);
        for (int64_t i = 0; i < n; ++i) {
            // Hidden positions t with t + 2 + i a target token inside the sequence.
            const int64_t first = std::max<int64_t>(0, prompt - 2 - i);
            const int64_t last = length - 3 - i;  // inclusive
            for (int64_t t0 = first; t0 <= last; t0 += chunk) {
                const int64_t m = std::min(chunk, last - t0 + 1);
                const at::Tensor states = heads.states(hidden.narrow(0, t0, m), i, 1).squeeze(1);  // [m, H]
                const at::Tensor logits = heads.head_logits(i, states);                            // [m, V]
                const at::Tensor truth = ids.narrow(0, t0 + 2 + i, m).unsqueeze(1);                 // [m, 1]
                const at::Tensor true_logit = logits.gather(1, truth);
                const at::Tensor index = at::arange(logits.size(1), at::kLong).unsqueeze(0);
                const at::Tensor rank = (logits > true_logit).sum(1) + ((logits == true_logit) & (index < truth)).sum(1);
                const at::Tensor counted = rank.to(at::kLong).contiguous();
                const int64_t* r = counted.data_ptr<int64_t>();
                for (int64_t k = 0; k < m; ++k)
                    if (r[k] < ranks) ++result.hits[static_cast<size_t>(i)][static_cast<size_t>(r[k])];
                result.positions[static_cast<size_t>(i)] += m;
            }
        }
    }
    return result;
}

}  // namespace cadenza::medusa
