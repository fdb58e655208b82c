#include "language_model_task.h"

#include "losses.h"
#include "model_directory.h"

namespace cadenza::training {

std::vector<TrainableParameter> all_parameters(const llama::LlamaWeights& weights) {
    std::vector<TrainableParameter> parameters;
    for (const auto& [name, tensor] : weights.named_parameters())
        parameters.push_back({name, tensor, tensor.dim() >= 2});
    return parameters;
}

LanguageModelTask::LanguageModelTask(const llama::LlamaConfig& config, uint64_t seed)
    : model_(llama::LlamaWeights::random(config, seed, at::kCPU), config.max_position_embeddings) {}

LanguageModelTask::LanguageModelTask(llama::LlamaWeights weights, int64_t max_positions)
    : model_(std::move(weights), max_positions) {}

std::vector<TrainableParameter> LanguageModelTask::parameters() { return all_parameters(model_.weights()); }

at::Tensor LanguageModelTask::loss(const Batch& batch) {
    const at::Tensor logits = model_.logits(model_.forward_sequence(batch.inputs()));
    return masked_cross_entropy(logits, batch.labels(1));
}

void LanguageModelTask::evaluate(const Batch& batch, Metrics& metrics) {
    const at::Tensor logits = model_.logits(model_.forward_sequence(batch.inputs()));
    add_prediction_metrics(logits, batch.labels(1), metrics);
}

void LanguageModelTask::save(const std::filesystem::path& output) const {
    save_model_directory(output, model_.weights(), {{"cadenza.kind", "target"}});
}

}  // namespace cadenza::training
