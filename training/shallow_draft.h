// The shallow draft of Speech Speculative Decoding (SSD, Lin et al.): a
// smaller LLaMA built from the target's own layers (any list of target layer
// indices, in the order given), its embedding, final norm and head. Only the
// chosen draft layers, the final norm and the head are trained; the
// embedding and the other layers stay frozen, equal to the target's.
//
// Loss: (1 - w) * cross-entropy on the data (the paper's Eq. 7) + w * KL(target
// || draft) on the same positions (distillation to the frozen target's
// next-token distribution); w = distill_weight, 0 gives the paper's loss.
//
// With a code grid the draft's head is a code-digit head (drafts/common/
// code_digit_head.h) instead of a copy of the target's: saved as
// digits.weight [R, H] and digits.bias [R] with the grid in the metadata, and
// config.json ties the (unused) vocabulary head to the embedding so that the
// file holds no 8,252 x H head.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <optional>

#include "code_digit_output.h"
#include "llama_model.h"
#include "training_task.h"

namespace cadenza::training {

struct ShallowDraftLayout {
    std::vector<int64_t> layers;        // target layer indices, in draft order
    std::vector<int64_t> train_layers;  // draft layer indices (positions in `layers`) that are trained
};

// "0,1,5" -> {0, 1, 5}; throws cadenza::Error naming `option` on anything
// but a comma-separated list of non-negative integers.
std::vector<int64_t> parse_index_list(const std::string& text, const std::string& option);
// {0, 1, 5} -> "0,1,5"
std::string format_index_list(const std::vector<int64_t>& indices);

// The draft's weights: the trained tensors are copies (so training leaves the
// target alone), the frozen ones share the target's storage. The head is
// always untied from the embedding (tie_word_embeddings = false), since the
// head is trained and the embedding is not. Throws cadenza::Error on an index
// out of range or a repeated --train-layers index.
llama::LlamaWeights build_shallow_draft(const llama::LlamaWeights& target, const ShallowDraftLayout& layout);

class ShallowDraftTask : public TrainingTask {
public:
    // `grid`: a code-digit head on that grid; nullptr: the target's head, trained.
    ShallowDraftTask(llama::LlamaWeights target, ShallowDraftLayout layout, std::filesystem::path target_path,
                     double distill_weight, const drafts::CodeGrid* grid = nullptr);

    // Starts the trained tensors from an earlier draft's model directory, which
    // must have been built from the same target layers with the same kind of
    // head (and grid); throws cadenza::Error naming the file otherwise.
    void initialize_from(const std::filesystem::path& directory);

    std::string kind() const override { return "draft"; }
    int64_t vocab_size() const override { return draft_.config().vocab_size; }
    int64_t max_positions() const override { return draft_.config().max_position_embeddings; }
    std::vector<TrainableParameter> parameters() override;
    at::Tensor loss(const Batch& batch) override;
    void evaluate(const Batch& batch, Metrics& metrics) override;
    void save(const std::filesystem::path& output) const override;
    std::vector<std::pair<std::string, std::string>> settings() const override;
    std::filesystem::path state_path(const std::filesystem::path& output) const override {
        return output / "training_state.safetensors";
    }

    const llama::LlamaModel& draft() const { return draft_; }
    const llama::LlamaModel& target() const { return target_; }

private:
    llama::LlamaModel target_;
    llama::LlamaModel draft_;
    ShallowDraftLayout layout_;
    std::filesystem::path target_path_;
    double distill_weight_;
    std::optional<drafts::CodeDigitDistribution> code_digits_;
    CodeDigitOutput digit_head_;

    // The draft's log-probabilities (or logits) over the vocabulary at hidden states [N, H].
    at::Tensor vocabulary_logits(const at::Tensor& hidden) const;
};

}  // namespace cadenza::training
