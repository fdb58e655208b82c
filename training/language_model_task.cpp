#include "language_model_task.h"

#include <sstream>

#include "error.h"
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

void LanguageModelTask::set_code_digits(CodeDigitEmbedding digits) {
    if (!model_.config().tie_word_embeddings)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--code-digits needs a model with tied embeddings (tie_word_embeddings)");
    if (!free_embedding_.defined()) free_embedding_ = model_.weights().embed_tokens;
    digits_ = std::move(digits);
}

void LanguageModelTask::refresh_embedding() {
    if (!digits_.enabled()) return;
    llama::LlamaWeights& weights = model_.weights();
    weights.embed_tokens = digits_.table(free_embedding_);
    weights.lm_head = weights.embed_tokens;
}

std::vector<TrainableParameter> LanguageModelTask::parameters() {
    std::vector<TrainableParameter> parameters = all_parameters(model_.weights());
    if (!digits_.enabled()) return parameters;
    parameters.front().tensor = free_embedding_;  // model.embed_tokens.weight
    for (size_t d = 0; d < digits_.digit_vectors().size(); ++d)
        parameters.push_back({"cadenza.code_digit_vectors." + std::to_string(d), digits_.digit_vectors()[d], true});
    return parameters;
}

at::Tensor LanguageModelTask::logits_and_guide(const at::Tensor& inputs, const Batch& batch, at::Tensor* guide_loss,
                                               double* guide_queries) {
    refresh_embedding();
    if (!guide_.enabled()) return model_.logits(model_.forward_sequence(inputs));
    llama::AttentionProbe probe;
    probe.layers = guide_.layers;
    probe.head = guide_.head;
    const at::Tensor logits = model_.logits(model_.forward_sequence(inputs, &probe));
    const GuideTargets targets = guide_targets(batch, guide_);
    *guide_loss = guided_attention_loss(probe.weights, targets);
    *guide_queries = targets.query_count;
    return logits;
}

at::Tensor LanguageModelTask::loss(const Batch& batch) {
    at::Tensor guide;
    double queries = 0;
    at::Tensor inputs = drop_text(noisy_inputs(batch, noise_), batch, text_dropout_);
    if (self_feeding_.enabled()) {
        at::Tensor own_logits;
        {
            at::NoGradGuard no_grad;
            refresh_embedding();
            own_logits = model_.logits(model_.forward_sequence(inputs));
        }
        inputs = self_fed_inputs(inputs, own_logits, batch, self_feeding_);
    }
    const at::Tensor logits = logits_and_guide(inputs, batch, &guide, &queries);
    const at::Tensor cross_entropy = masked_cross_entropy(logits, batch.labels(1));
    return guide.defined() ? cross_entropy + guide_.weight * guide : cross_entropy;
}

void LanguageModelTask::evaluate(const Batch& batch, Metrics& metrics) {
    at::Tensor guide;
    double queries = 0;
    const at::Tensor logits = logits_and_guide(batch.inputs(), batch, &guide, &queries);
    add_prediction_metrics(logits, batch.labels(1), metrics);
    if (guide.defined() && queries > 0)
        metrics.add("attention off the text diagonal", Unit::fraction, guide.item<double>() * queries, queries);
}

std::vector<std::pair<std::string, std::string>> LanguageModelTask::settings() const {
    std::vector<std::pair<std::string, std::string>> settings;
    if (digits_.enabled()) settings.emplace_back("cadenza.train.code_digits", digits_.describe());
    const auto add_rate = [&](const char* key, double rate) {
        std::ostringstream value;
        value.precision(17);
        value << rate;
        settings.emplace_back(key, value.str());
    };
    if (noise_.enabled()) add_rate("cadenza.train.code_input_noise", noise_.rate);
    if (text_dropout_.enabled()) add_rate("cadenza.train.text_dropout", text_dropout_.rate);
    if (self_feeding_.enabled()) add_rate("cadenza.train.self_feeding", self_feeding_.rate);
    if (!guide_.enabled()) return settings;
    std::ostringstream value;
    value.precision(17);
    value << "layers";
    for (const int64_t layer : guide_.layers) value << ' ' << layer;
    value << ", head " << guide_.head << ", weight " << guide_.weight << ", width " << guide_.width;
    settings.emplace_back("cadenza.train.guided_attention", value.str());
    return settings;
}

void LanguageModelTask::save(const std::filesystem::path& output) const {
    llama::LlamaWeights weights = model_.weights();
    if (digits_.enabled()) {
        at::NoGradGuard no_grad;
        weights.embed_tokens = digits_.table(free_embedding_).detach();
        weights.lm_head = weights.embed_tokens;
    }
    save_model_directory(output, weights, {{"cadenza.kind", "target"}});
}

}  // namespace cadenza::training
