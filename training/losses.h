// Token-level losses and metrics over labelled positions (labels equal to
// ignore_label are skipped).
#pragma once

#include <string>

#include <ATen/ATen.h>

#include "metrics.h"

namespace cadenza::training {

// Mean cross-entropy over the labelled positions of logits [..., V] and
// labels [...]; 0 (still differentiable) when nothing is labelled.
at::Tensor masked_cross_entropy(const at::Tensor& logits, const at::Tensor& labels);

// Mean KL(teacher || student) per labelled position, from logits [..., V];
// the teacher's are treated as constants.
at::Tensor masked_kl_divergence(const at::Tensor& teacher_logits, const at::Tensor& student_logits,
                                const at::Tensor& labels);

// Adds "<prefix>loss" (nats/token), "<prefix>accuracy" (top-1) and, when
// top_k > 1, "<prefix>top-<k> accuracy" over the labelled positions.
void add_prediction_metrics(const at::Tensor& logits, const at::Tensor& labels, Metrics& metrics,
                            const std::string& prefix = "", int64_t top_k = 0);

// The number of labelled positions.
int64_t labelled_count(const at::Tensor& labels);

// The labelled positions of labels [...]: their flat indices [N] and labels
// [N]. Projecting only these onto the vocabulary gives the same loss and
// gradient as masking the full projection, for a fraction of its cost (a TTS
// batch's prompts and padding are unlabelled).
struct LabelledPositions {
    at::Tensor indices;
    at::Tensor labels;
};
LabelledPositions labelled_positions(const at::Tensor& labels);

// The rows of per_position [..., D] at the labelled positions: [N, D].
at::Tensor select_positions(const at::Tensor& per_position, const LabelledPositions& positions);

}  // namespace cadenza::training
