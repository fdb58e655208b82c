// Draft heads on the target's last hidden state, shared by multi-token
// prediction (MTP, Nguyen et al.) and MEDUSA (VADUSA, Li et al.): head i
// computes h_i = h + SiLU(W_i h + b_i) from the hidden state h after the
// final norm, and logits_i = lm_head(h_i) with the target's own head. From
// position t (whose own next token, t + 1, the target predicts), head i
// predicts token t + 2 + i.
//
// File (safetensors): heads.{i}.linear.weight [H, H] and heads.{i}.linear.bias
// [H] for i = 0..n-1; metadata cadenza.kind ("mtp" or "medusa"),
// cadenza.heads (n), cadenza.hidden_size (H). See docs/training.md.
//
// With a code grid (--output code-digits) each head has its own small output
// head instead of the target's, heads.{i}.digits.weight [R, H] and .bias [R]
// (drafts/common/code_digit_head.h), and the metadata adds cadenza.output =
// "code_digits", cadenza.code_levels and cadenza.code_offset.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <memory>

#include "code_digit_head.h"
#include "llama_model.h"
#include "training_task.h"

namespace cadenza::training {

struct DraftHeads {
    std::string kind;  // "mtp" or "medusa"
    std::vector<at::Tensor> weights;  // [H, H] each
    std::vector<at::Tensor> biases;   // [H] each
    // Code-digit output heads (empty: the target's lm_head): [R, H] and [R] each.
    std::shared_ptr<const drafts::CodeDigitDistribution> code_digits;
    std::vector<at::Tensor> digit_weights, digit_biases;

    // Heads that start as the identity (h_i = h): zero weight and bias, as MEDUSA initialises them.
    static DraftHeads identity(const std::string& kind, int64_t heads, int64_t hidden_size);
    // The same with code-digit output heads, each starting as the factorized
    // form of the target's output table [V, H] (CodeDigitOutput::from_table).
    static DraftHeads identity_with_code_digits(const std::string& kind, int64_t heads, const at::Tensor& target_table,
                                                const drafts::CodeGrid& grid);
    static DraftHeads load(const std::filesystem::path& path);
    void save(const std::filesystem::path& path,
              const std::vector<std::pair<std::string, std::string>>& metadata = {}) const;

    int64_t count() const { return static_cast<int64_t>(weights.size()); }
    // "code digits 8,8,8,4,4 from token 58" or "vocabulary" (the target's head).
    std::string output_description() const;
    // h_i from hidden states [..., H].
    at::Tensor apply(int64_t head, const at::Tensor& hidden) const;
    // Head `head`'s logits over the vocabulary from its states h_i [N, H]:
    // the target's head, or the code-digit head's log-probabilities.
    at::Tensor vocabulary_logits(int64_t head, const at::Tensor& states, const llama::LlamaModel& target) const;
    // The heads' weights as an optimizer trains them, by their file names.
    std::vector<TrainableParameter> parameters() const;
    // Head `head`'s mean cross-entropy on the corpus's tokens `labels` [N]
    // from its states [N, H] (code digits: without vocabulary-wide rows).
    at::Tensor cross_entropy(int64_t head, const at::Tensor& states, const at::Tensor& labels,
                             const llama::LlamaModel& target) const;
    // Held-out figures of every head from the hidden states [B, T, H] of a
    // batch: loss, top-1/top-5 accuracy and acceptance against the target's
    // own next-token distributions `target_p` [B*T, V] (sum min(p, q)).
    void add_metrics(const at::Tensor& hidden, const at::Tensor& target_p, const Batch& batch,
                     const llama::LlamaModel& target, Metrics& metrics) const;
};

// The weight of head i (0-based) in the multi-head loss:
//   mtp:    1 for every head (the MTP paper's Eq. 3 sums the heads' negative log-likelihoods);
//   medusa: 0.8^(i+1) (MEDUSA's lambda_k = 0.8^k for its k-th head, k = i + 1).
double head_loss_weight(const std::string& kind, int64_t head);

// Training the heads with the target frozen: the target runs without grad,
// the heads train on its detached hidden states. Loss per head: (1 - w) *
// cross-entropy on the corpus's token + w * cross-entropy against the
// target's own distribution for that token (teacher-forced on the corpus:
// the target's next-token distribution at the position before it); w =
// distill_weight. Held out: each head's loss, top-1 and top-5 accuracy, and
// its acceptance against the target, the mean of sum_t min(p_target(t),
// q_head(t)): the probability that speculative sampling at temperature 1
// keeps the head's token.
class DraftHeadsTask : public TrainingTask {
public:
    // `grid`: code-digit output heads on that grid; nullptr: the target's lm_head.
    DraftHeadsTask(llama::LlamaWeights target, const std::string& kind, int64_t heads,
                   std::filesystem::path target_path, const drafts::CodeGrid* grid = nullptr,
                   double distill_weight = 0.0);

    // Starts from an earlier heads file's weights (a second training phase):
    // the same kind, count, hidden size and output (code digits or not).
    // Throws Error(INVALID_CONFIG) naming the file and what differs.
    void initialize_from(const std::filesystem::path& heads_file);

    std::string kind() const override { return heads_.kind; }
    int64_t vocab_size() const override { return target_.config().vocab_size; }
    int64_t max_positions() const override { return target_.config().max_position_embeddings; }
    std::vector<TrainableParameter> parameters() override;
    at::Tensor loss(const Batch& batch) override;
    void evaluate(const Batch& batch, Metrics& metrics) override;
    void save(const std::filesystem::path& output) const override;
    std::vector<std::pair<std::string, std::string>> settings() const override;
    // FILE.safetensors -> FILE.training_state.safetensors
    std::filesystem::path state_path(const std::filesystem::path& output) const override;

    const DraftHeads& heads() const { return heads_; }
    const llama::LlamaModel& target() const { return target_; }

private:
    llama::LlamaModel target_;
    DraftHeads heads_;
    std::filesystem::path target_path_;
    double distill_weight_ = 0.0;
};

}  // namespace cadenza::training
