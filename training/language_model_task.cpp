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
    llama::LlamaWeights& weights = model_.mutable_weights();
    weights.embed_tokens = digits_.table(free_embedding_);
    weights.lm_head = weights.embed_tokens;
}

void LanguageModelTask::set_mtp_heads(DraftHeads heads, double weight) {
    if (!(weight > 0 && weight <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--mtp-weight must be in (0, 1]");
    if (heads.kind != "mtp")
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--mtp-heads: the file's heads are " + heads.kind + " heads, not mtp");
    const int64_t hidden = heads.count() > 0 ? heads.weights[0].size(0) : 0;
    if (hidden != model_.config().hidden_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--mtp-heads: the heads' hidden size is " + std::to_string(hidden) +
                                                     ", the model's " + std::to_string(model_.config().hidden_size));
    if (heads.code_digits && heads.code_digits->grid().vocab_size != model_.config().vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--mtp-heads: the heads' code grid is for a vocabulary of " +
                                                     std::to_string(heads.code_digits->grid().vocab_size) +
                                                     " tokens, the model has " +
                                                     std::to_string(model_.config().vocab_size));
    mtp_heads_ = std::move(heads);
    mtp_weight_ = weight;
}

std::vector<TrainableParameter> LanguageModelTask::parameters() {
    std::vector<TrainableParameter> parameters = all_parameters(model_.weights());
    if (digits_.enabled()) {
        parameters.front().tensor = free_embedding_;  // model.embed_tokens.weight
        for (size_t d = 0; d < digits_.digit_vectors().size(); ++d)
            parameters.push_back({"cadenza.code_digit_vectors." + std::to_string(d), digits_.digit_vectors()[d], true});
    }
    for (auto& parameter : mtp_heads_.parameters()) {
        parameter.name = "cadenza.mtp." + parameter.name;
        parameters.push_back(std::move(parameter));
    }
    return parameters;
}

at::Tensor LanguageModelTask::hidden_and_guide(const at::Tensor& inputs, const Batch& batch, at::Tensor* guide_loss,
                                               double* guide_queries) {
    refresh_embedding();
    if (!guide_.enabled()) return model_.forward_sequence(inputs);
    llama::AttentionProbe probe;
    probe.layers = guide_.layers;
    probe.head = guide_.head;
    const at::Tensor hidden = model_.forward_sequence(inputs, &probe);
    const GuideTargets targets = guide_targets(batch, guide_);
    *guide_loss = guided_attention_loss(probe.weights, targets);
    *guide_queries = targets.query_count;
    return hidden;
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
    const at::Tensor hidden = hidden_and_guide(inputs, batch, &guide, &queries);
    at::Tensor loss = masked_cross_entropy(model_.logits(hidden), batch.labels(1));
    for (int64_t i = 0; i < mtp_heads_.count(); ++i) {
        const LabelledPositions positions = labelled_positions(batch.labels(i + 2));
        const at::Tensor states = mtp_heads_.apply(i, select_positions(hidden, positions));
        loss = loss + mtp_weight_ * head_loss_weight(mtp_heads_.kind, i) *
                          mtp_heads_.cross_entropy(i, states, positions.labels, model_);
    }
    return guide.defined() ? loss + guide_.weight * guide : loss;
}

void LanguageModelTask::evaluate(const Batch& batch, Metrics& metrics) {
    at::Tensor guide;
    double queries = 0;
    const at::Tensor hidden = hidden_and_guide(batch.inputs(), batch, &guide, &queries);
    const at::Tensor logits = model_.logits(hidden);
    add_prediction_metrics(logits, batch.labels(1), metrics);
    if (guide.defined() && queries > 0)
        metrics.add("attention off the text diagonal", Unit::fraction, guide.item<double>() * queries, queries);
    if (mtp_heads_.count() > 0)
        mtp_heads_.add_metrics(hidden, at::softmax(logits.reshape({-1, logits.size(-1)}), -1), batch, model_, metrics);
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
    if (mtp_heads_.count() > 0) {
        settings.emplace_back("cadenza.train.mtp_heads",
                              std::to_string(mtp_heads_.count()) + ", output " + mtp_heads_.output_description());
        if (mtp_weight_ != 1.0) add_rate("cadenza.train.mtp_weight", mtp_weight_);
    }
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
    if (mtp_heads_.count() > 0) mtp_heads_.save(mtp_heads_file(output), {{"cadenza.target", output.string()}});
}

}  // namespace cadenza::training
