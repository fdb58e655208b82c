// Training the recurrent draft (drafts/common/recurrent_draft.h) with the
// target frozen. The target runs without grad; from its hidden state h_t at
// every position the cell walks `depth` steps, teacher-forced: step k reads
// the batch's token t + k (the token the target, or the corpus, put there)
// and predicts token t + k + 1. Loss at step k, weighted 0.8^(k-1) as
// MEDUSA weights its heads: (1 - w) * cross-entropy on the corpus's token +
// w * cross-entropy against the target's own next-token distribution at
// t + k (teacher-forced on the same prefix the cell read); w =
// distill_weight. On the target's own samples (`cadenza corpus sampled`) the
// teacher forcing is exactly what an exact acceptor keeps: drafts after an
// accepted token read the token the target sampled.
//
// Held out, per step k: loss, top-1/top-5 accuracy and acceptance against
// the target (mean of sum_t min(p_target(t), q(t)), the probability that
// speculative sampling keeps the draft's token); and the code-digit ceiling,
// the same acceptance for the product of the target's own digit marginals:
// the product distribution that distillation (KL) aims at, so about the best
// a code-digit head can reach at step 1.
//
// With table scoring (`--table-scoring`, draft.recurrent's `candidates`),
// each step's loss adds the same two terms for the distribution the cell's
// state gives through the target's own output table, softmax(W_lm s_k / T)
// over the whole vocabulary (the table frozen): the digit head picks the
// candidates, the table scores them. Held out adds, per step, the
// acceptance of that distribution cut by the pipeline's top-p ("table
// acceptance") and of the same restricted to the digit head's 16, 64 and 256
// most likely tokens ("top-K candidates acceptance"), as the drafter forms it.
//
// Under sampling settings other than temperature 1 (`cadenza train recurrent
// --sampling-temperature/--sampling-top-p`, the pipeline's), the teacher
// and the held-out p_target are the target's distribution as the pipeline
// samples it (sampling_distribution.h), and the draft's logits are divided
// by the temperature, as the drafter divides them: the draft learns, and is
// judged by, the distribution an acceptor compares with the target's.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "group_coarsening.h"
#include "llama_model.h"
#include "recurrent_draft.h"
#include "sampling_distribution.h"
#include "training_task.h"

namespace cadenza::training {

// What the distillation term measures between the target's distribution p
// and the draft's q: cross-entropy (KL(p || q) plus p's entropy; for a
// code-digit head it matches p's digit marginals), or total variation
// 1 - sum_t min(p(t), q(t)), one minus the acceptance itself (DistillSpec,
// Zhou et al. 2024), over the vocabulary-wide product rows; or group total
// variation, one minus acceptor.pcg's acceptance over its groups
// (group_coarsening.h), for a draft that serves PCG.
enum class DistillDivergence { cross_entropy, total_variation, group_total_variation };

class RecurrentDraftTask : public TrainingTask {
public:
    RecurrentDraftTask(llama::LlamaWeights target, int64_t cell_size, int64_t depth, const drafts::CodeGrid& grid,
                       std::filesystem::path target_path, double distill_weight, SamplingSettings sampling,
                       uint64_t seed, DistillDivergence divergence = DistillDivergence::cross_entropy);

    // Starts from an earlier recurrent draft (a second phase): the same cell
    // size, hidden size, depth and grid. Throws Error(INVALID_CONFIG) naming
    // the file and what differs.
    void initialize_from(const std::filesystem::path& draft_file);
    // acceptor.pcg's groups (a groups file), which group_total_variation
    // needs; with them the held-out metrics add each step's group acceptance.
    void set_groups(const std::filesystem::path& groups_file);
    // Trains the cell's states to be scored by the target's output table as
    // well (the draft file then says so: RecurrentDraft::table_scored).
    void score_with_target_table() { draft_.table_scored = true; }

    std::string kind() const override { return "recurrent"; }
    int64_t vocab_size() const override { return target_.config().vocab_size; }
    int64_t max_positions() const override { return target_.config().max_position_embeddings; }
    std::vector<TrainableParameter> parameters() override;
    at::Tensor loss(const Batch& batch) override;
    void evaluate(const Batch& batch, Metrics& metrics) override;
    void save(const std::filesystem::path& output) const override;
    std::vector<std::pair<std::string, std::string>> settings() const override;
    // FILE.safetensors -> FILE.training_state.safetensors
    std::filesystem::path state_path(const std::filesystem::path& output) const override;

    const drafts::RecurrentDraft& draft() const { return draft_; }
    const llama::LlamaModel& target() const { return target_; }

    // The cell's states s_1..s_depth at every position of a batch, [B*T, H]
    // each, from the target's hidden states [B, T, H]: s_k at t has read
    // tokens t+1..t+k.
    std::vector<at::Tensor> walk(const at::Tensor& hidden, const Batch& batch) const;

private:
    // The draft's digit logits at states [N, H], divided by the temperature.
    at::Tensor sampled_digit_logits(const at::Tensor& states) const;
    // The target's logits [B*T, V] from its hidden states [B, T, H].
    at::Tensor target_logits(const at::Tensor& hidden) const;
    // The target's output table on the draft's states [N, H], divided by the temperature.
    at::Tensor sampled_table_logits(const at::Tensor& states) const;

    llama::LlamaModel target_;
    at::Tensor embedding_;  // the target's input embedding [V, H], frozen
    drafts::RecurrentDraft draft_;
    std::filesystem::path target_path_;
    double distill_weight_;
    SamplingSettings sampling_;
    DistillDivergence divergence_;
    std::filesystem::path groups_path_;
    std::shared_ptr<const GroupCoarsening> groups_;
};

}  // namespace cadenza::training
