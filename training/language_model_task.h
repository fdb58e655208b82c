// Training a target: next-token cross-entropy on the target segments (plus
// an optional guided-attention loss, optional digit-structured code
// embeddings, optional noise on the fed codes, text dropout and
// self-feeding), every parameter trained. Output: a Hugging Face model
// directory (config.json, model.safetensors) plus training_state.safetensors.
#pragma once

#include "code_digit_embedding.h"
#include "code_input_noise.h"
#include "draft_heads.h"
#include "guided_attention.h"
#include "llama_model.h"
#include "self_feeding.h"
#include "text_dropout.h"
#include "training_task.h"

namespace cadenza::training {

class LanguageModelTask : public TrainingTask {
public:
    // Fresh weights from `seed` (LlamaWeights::random).
    LanguageModelTask(const llama::LlamaConfig& config, uint64_t seed);
    // Starts from trained weights (e.g. a model trained on an easier corpus).
    LanguageModelTask(llama::LlamaWeights weights, int64_t max_positions);

    std::string kind() const override { return "lm"; }
    int64_t vocab_size() const override { return model_.config().vocab_size; }
    int64_t max_positions() const override { return model_.config().max_position_embeddings; }
    std::vector<TrainableParameter> parameters() override;
    at::Tensor loss(const Batch& batch) override;
    void evaluate(const Batch& batch, Metrics& metrics) override;
    void save(const std::filesystem::path& output) const override;
    std::vector<std::pair<std::string, std::string>> settings() const override;
    std::filesystem::path state_path(const std::filesystem::path& output) const override {
        return output / "training_state.safetensors";
    }

    const llama::LlamaModel& model() const { return model_; }
    // Adds a guided-attention loss on the listed heads (guided_attention.h).
    void set_guided_attention(GuidedAttention guide) { guide_ = std::move(guide); }
    // Builds the tied code rows from digit vectors (code_digit_embedding.h);
    // the model's embedding becomes the free part. Needs tied embeddings.
    void set_code_digits(CodeDigitEmbedding digits);
    // Replaces some fed target codes in training batches (code_input_noise.h).
    void set_code_input_noise(CodeInputNoise noise) { noise_ = noise; }
    // Nulls the text of some training sequences (text_dropout.h).
    void set_text_dropout(TextDropout dropout) { text_dropout_ = dropout; }
    // Feeds the model some of its own sampled codes (self_feeding.h).
    void set_self_feeding(SelfFeeding feeding) { self_feeding_ = feeding; }
    // Trains MTP heads jointly with the model, as the MTP paper (Nguyen et
    // al.) trains its AR module (its Eq. 3): the loss adds each head's
    // cross-entropy on token t + 2 + i, with the heads' loss weights, to the
    // next token's; gradients reach the model through its hidden states.
    // `weight` scales the heads' part (1: Eq. 3). The heads are saved beside
    // the model as mtp_heads_file(output).
    void set_mtp_heads(DraftHeads heads, double weight = 1.0);
    const DraftHeads& mtp_heads() const { return mtp_heads_; }
    static std::filesystem::path mtp_heads_file(const std::filesystem::path& output) { return output / "mtp.safetensors"; }

private:
    // With code digits: the model's table = the free rows + digit vectors.
    void refresh_embedding();
    // The hidden states after the final norm [B, T, H] (and the guide's loss).
    at::Tensor hidden_and_guide(const at::Tensor& inputs, const Batch& batch, at::Tensor* guide_loss,
                                double* guide_queries);

    llama::LlamaModel model_;
    GuidedAttention guide_;
    CodeDigitEmbedding digits_;
    CodeInputNoise noise_;
    TextDropout text_dropout_;
    SelfFeeding self_feeding_;
    DraftHeads mtp_heads_;  // no heads: count() == 0
    double mtp_weight_ = 1.0;
    at::Tensor free_embedding_;  // the leaf the optimizer trains, with code digits
};

// Every tensor of `weights` as trainable parameters under their Hugging Face
// names; decay on matrices only.
std::vector<TrainableParameter> all_parameters(const llama::LlamaWeights& weights);

}  // namespace cadenza::training
