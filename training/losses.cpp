#include "losses.h"

#include <ATen/core/Reduction.h>

#include "batch_sampler.h"

namespace cadenza::training {

int64_t labelled_count(const at::Tensor& labels) { return labels.ne(ignore_label).sum().item<int64_t>(); }

LabelledPositions labelled_positions(const at::Tensor& labels) {
    const at::Tensor flat = labels.reshape({-1});
    const at::Tensor indices = flat.ne(ignore_label).nonzero().reshape({-1});
    return {indices, flat.index_select(0, indices)};
}

at::Tensor select_positions(const at::Tensor& per_position, const LabelledPositions& positions) {
    const int64_t width = per_position.size(-1);
    return per_position.reshape({-1, width}).index_select(0, positions.indices);
}

at::Tensor masked_cross_entropy(const at::Tensor& logits, const at::Tensor& labels) {
    const int64_t vocab = logits.size(-1);
    const at::Tensor flat_logits = logits.reshape({-1, vocab});
    const at::Tensor flat_labels = labels.reshape({-1});
    const at::Tensor total =
        at::cross_entropy_loss(flat_logits, flat_labels, {}, at::Reduction::Sum, ignore_label);
    const int64_t count = labelled_count(flat_labels);
    return total / static_cast<double>(std::max<int64_t>(count, 1));
}

at::Tensor masked_kl_divergence(const at::Tensor& teacher_logits, const at::Tensor& student_logits,
                                const at::Tensor& labels) {
    const int64_t vocab = student_logits.size(-1);
    const at::Tensor mask = labels.reshape({-1}).ne(ignore_label);
    const at::Tensor teacher = at::log_softmax(teacher_logits.detach().reshape({-1, vocab}), -1);
    const at::Tensor student = at::log_softmax(student_logits.reshape({-1, vocab}), -1);
    const at::Tensor per_position = (teacher.exp() * (teacher - student)).sum(-1);  // [N]
    const int64_t count = mask.sum().item<int64_t>();
    return (per_position * mask.to(per_position.scalar_type())).sum() / static_cast<double>(std::max<int64_t>(count, 1));
}

void add_prediction_metrics(const at::Tensor& logits, const at::Tensor& labels, Metrics& metrics,
                            const std::string& prefix, int64_t top_k) {
    const int64_t vocab = logits.size(-1);
    const at::Tensor flat_logits = logits.reshape({-1, vocab});
    const at::Tensor flat_labels = labels.reshape({-1});
    const at::Tensor mask = flat_labels.ne(ignore_label);
    const auto count = static_cast<double>(mask.sum().item<int64_t>());
    const double loss =
        at::cross_entropy_loss(flat_logits, flat_labels, {}, at::Reduction::Sum, ignore_label).item<double>();
    const double correct = (flat_logits.argmax(-1).eq(flat_labels) & mask).sum().item<double>();
    metrics.add(prefix + "loss", Unit::nats, loss, count);
    metrics.add(prefix + "accuracy", Unit::fraction, correct, count);
    if (top_k > 1) {
        const int64_t k = std::min(top_k, vocab);
        const at::Tensor top = std::get<1>(flat_logits.topk(k, -1));  // [N, k]
        const double hits = (top.eq(flat_labels.unsqueeze(1)).any(1) & mask).sum().item<double>();
        metrics.add(prefix + "top-" + std::to_string(k) + " accuracy", Unit::fraction, hits, count);
    }
}

}  // namespace cadenza::training
