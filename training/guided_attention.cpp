#include "guided_attention.h"

#include <cmath>

namespace cadenza::training {

GuideTargets guide_targets(const Batch& batch, const GuidedAttention& guide) {
    const SpeechTokenLayout& layout = guide.layout;
    const at::Tensor tokens = batch.tokens.contiguous();
    const at::Tensor trained = batch.trained.contiguous();
    const int64_t rows = tokens.size(0), width = tokens.size(1), time = batch.time();
    const int64_t* ids = tokens.data_ptr<int64_t>();
    const bool* is_target = trained.data_ptr<bool>();

    auto is_text = [&](int64_t id) {
        return id >= layout.text_token_offset && id < layout.text_token_offset + layout.text_token_count;
    };
    std::vector<int64_t> text_length(rows, 0);
    int64_t longest_text = 1;
    for (int64_t b = 0; b < rows; ++b) {
        const int64_t* row = ids + b * width;
        int64_t length = 0;
        while (length < width && is_text(row[length])) ++length;
        bool has_end = false;
        for (int64_t t = 0; t < width; ++t) has_end |= is_target[b * width + t] && row[t] == layout.end_token;
        if (length > 0 && has_end) text_length[b] = length;
        longest_text = std::max(longest_text, text_length[b]);
    }

    std::vector<float> penalty(static_cast<size_t>(rows * time * longest_text), 0.0f);
    std::vector<float> queries(static_cast<size_t>(rows * time), 0.0f);
    double count = 0;
    const double two_g2 = 2.0 * guide.width * guide.width;
    for (int64_t b = 0; b < rows; ++b) {
        const int64_t length = text_length[b];
        if (length == 0) continue;
        // Fed target codes: trained positions before the end token.
        std::vector<int64_t> frames;
        for (int64_t t = 0; t < time; ++t)
            if (is_target[b * width + t] && ids[b * width + t] != layout.end_token) frames.push_back(t);
        const auto n = static_cast<double>(frames.size());
        for (size_t j = 0; j < frames.size(); ++j) {
            const int64_t q = frames[j];
            queries[b * time + q] = 1.0f;
            count += 1;
            float* p = &penalty[(b * time + q) * longest_text];
            for (int64_t i = 0; i < length; ++i) {
                const double offset = static_cast<double>(i) / length - static_cast<double>(j) / n;
                p[i] = static_cast<float>(-std::exp(-offset * offset / two_g2));  // W - 1
            }
        }
    }
    GuideTargets out;
    out.penalty = at::tensor(penalty).view({rows, time, longest_text});
    out.queries = at::tensor(queries).view({rows, time});
    out.query_count = count;
    return out;
}

at::Tensor guided_attention_loss(const std::vector<at::Tensor>& attention, const GuideTargets& targets) {
    if (attention.empty() || targets.query_count == 0) return at::zeros({}, at::kFloat);
    const int64_t text = targets.penalty.size(2);
    at::Tensor total = at::zeros({}, at::kFloat);
    for (const at::Tensor& weights : attention) {
        const at::Tensor off = 1.0 + (weights.narrow(2, 0, text) * targets.penalty).sum(-1);  // [B, T]
        total = total + (off * targets.queries).sum() / targets.query_count;
    }
    return total / static_cast<double>(attention.size());
}

}  // namespace cadenza::training
