#include "shallow_draft.h"

#include <cstdio>
#include <set>

#include "error.h"
#include "losses.h"
#include "model_directory.h"
#include "safetensors.h"

namespace cadenza::training {
namespace {

llama::LayerWeights clone_layer(const llama::LayerWeights& layer) {
    auto copy = [](const at::Tensor& t) { return t.defined() ? t.detach().clone() : t; };
    llama::LayerWeights l;
    l.input_norm = copy(layer.input_norm);
    l.q_proj = copy(layer.q_proj);
    l.k_proj = copy(layer.k_proj);
    l.v_proj = copy(layer.v_proj);
    l.o_proj = copy(layer.o_proj);
    l.q_bias = copy(layer.q_bias);
    l.k_bias = copy(layer.k_bias);
    l.v_bias = copy(layer.v_bias);
    l.post_attention_norm = copy(layer.post_attention_norm);
    l.gate_proj = copy(layer.gate_proj);
    l.up_proj = copy(layer.up_proj);
    l.down_proj = copy(layer.down_proj);
    return l;
}

}  // namespace

std::vector<int64_t> parse_index_list(const std::string& text, const std::string& option) {
    std::vector<int64_t> indices;
    size_t begin = 0;
    while (true) {
        const size_t end = std::min(text.find(',', begin), text.size());
        std::string item = text.substr(begin, end - begin);
        while (!item.empty() && item.front() == ' ') item.erase(item.begin());
        while (!item.empty() && item.back() == ' ') item.pop_back();
        if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        option + " '" + text + "': expected comma-separated layer indices such as 0,1,5");
        indices.push_back(std::stoll(item));
        if (end == text.size()) break;
        begin = end + 1;
    }
    return indices;
}

std::string format_index_list(const std::vector<int64_t>& indices) {
    std::string text;
    for (size_t i = 0; i < indices.size(); ++i) text += (i ? "," : "") + std::to_string(indices[i]);
    return text;
}

llama::LlamaWeights build_shallow_draft(const llama::LlamaWeights& target, const ShallowDraftLayout& layout) {
    const auto target_layers = static_cast<int64_t>(target.layers.size());
    if (layout.layers.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--layers: the draft needs at least one layer");
    for (int64_t layer : layout.layers)
        if (layer < 0 || layer >= target_layers)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--layers: the target has layers 0.." +
                                                         std::to_string(target_layers - 1) + ", not " +
                                                         std::to_string(layer));
    std::set<int64_t> trained;
    for (int64_t index : layout.train_layers) {
        if (index < 0 || index >= static_cast<int64_t>(layout.layers.size()))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        "--train-layers: indices are positions in the draft (0.." +
                            std::to_string(layout.layers.size() - 1) + "), not " + std::to_string(index));
        if (!trained.insert(index).second)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--train-layers: " + std::to_string(index) + " is listed twice");
    }
    llama::LlamaWeights draft;
    draft.config = target.config;
    draft.config.num_hidden_layers = static_cast<int64_t>(layout.layers.size());
    draft.config.tie_word_embeddings = false;
    draft.embed_tokens = target.embed_tokens;
    for (size_t i = 0; i < layout.layers.size(); ++i) {
        const auto& source = target.layers[static_cast<size_t>(layout.layers[i])];
        draft.layers.push_back(trained.count(static_cast<int64_t>(i)) ? clone_layer(source) : source);
    }
    draft.norm = target.norm.detach().clone();
    draft.lm_head = target.lm_head.detach().clone();
    return draft;
}

ShallowDraftTask::ShallowDraftTask(llama::LlamaWeights target, ShallowDraftLayout layout,
                                   std::filesystem::path target_path, double distill_weight, const drafts::CodeGrid* grid)
    : target_(target, target.config.max_position_embeddings),
      draft_(build_shallow_draft(target, layout), target.config.max_position_embeddings),
      layout_(std::move(layout)),
      target_path_(std::move(target_path)),
      distill_weight_(distill_weight) {
    if (!(distill_weight >= 0 && distill_weight <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--distill-weight must be in [0, 1]");
    if (grid) {
        code_digits_.emplace(*grid);
        digit_head_ = CodeDigitOutput::from_table(target.lm_head, *grid);
    }
}

void ShallowDraftTask::initialize_from(const std::filesystem::path& directory) {
    const std::filesystem::path file_path = directory / "model.safetensors";
    const std::string where = file_path.string();
    try {
        const safetensors::File file(file_path);
        auto meta = [&](const std::string& key) {
            const auto found = file.metadata().find(key);
            return found == file.metadata().end() ? std::string() : found->second;
        };
        if (meta("cadenza.kind") != "shallow_draft")
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": not a shallow draft (metadata cadenza.kind is '" +
                                                       meta("cadenza.kind") + "')");
        if (meta("cadenza.draft_layers") != format_index_list(layout_.layers))
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": built from target layers " + meta("cadenza.draft_layers") +
                                                       ", not --layers " + format_index_list(layout_.layers));
        const std::optional<drafts::CodeGrid> grid =
            drafts::code_grid_of(file.metadata(), draft_.config().vocab_size, where);
        const std::string expected = code_digits_ ? code_digits_->grid().levels_text() : "none";
        if ((grid ? grid->levels_text() : "none") != expected ||
            (grid && grid->code_offset != code_digits_->grid().code_offset))
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": its head's code digits (" +
                                                       (grid ? grid->levels_text() : "none") +
                                                       ") differ from this run's (" + expected + ")");
        // Every trained tensor is stored under its parameter's name.
        at::NoGradGuard no_grad;
        for (auto& parameter : parameters()) {
            const safetensors::Shape shape(parameter.tensor.sizes().begin(), parameter.tensor.sizes().end());
            std::vector<float> values = file.read_f32(parameter.name, shape);
            parameter.tensor.copy_(at::from_blob(values.data(), parameter.tensor.sizes(), at::kFloat));
        }
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

std::vector<TrainableParameter> ShallowDraftTask::parameters() {
    std::set<std::string> prefixes;
    for (int64_t index : layout_.train_layers) prefixes.insert("model.layers." + std::to_string(index) + ".");
    std::vector<TrainableParameter> parameters;
    for (const auto& [name, tensor] : draft_.weights().named_parameters()) {
        const bool in_trained_layer = [&] {
            for (const auto& prefix : prefixes)
                if (name.rfind(prefix, 0) == 0) return true;
            return false;
        }();
        const bool head = name == "lm_head.weight" && !code_digits_;
        const bool norm = name == "model.norm.weight" && !layout_.train_layers.empty();
        if (in_trained_layer || norm || head)
            parameters.push_back({name, tensor, tensor.dim() >= 2});
    }
    if (code_digits_) {
        parameters.push_back({"digits.weight", digit_head_.weight, true});
        parameters.push_back({"digits.bias", digit_head_.bias, false});
    }
    return parameters;
}

std::vector<std::pair<std::string, std::string>> ShallowDraftTask::settings() const {
    if (!code_digits_) return {};  // as before the option, so that older checkpoints resume
    return {{"cadenza.train.draft_output", "code digits " + code_digits_->grid().levels_text() + " from token " +
                                               std::to_string(code_digits_->grid().code_offset)}};
}

at::Tensor ShallowDraftTask::vocabulary_logits(const at::Tensor& hidden) const {
    if (!code_digits_) return draft_.logits(hidden);
    return code_digits_->log_probabilities(at::linear(hidden, digit_head_.weight, digit_head_.bias));
}

at::Tensor ShallowDraftTask::loss(const Batch& batch) {
    const at::Tensor inputs = batch.inputs();
    const LabelledPositions positions = labelled_positions(batch.labels(1));
    const at::Tensor& labels = positions.labels;
    const at::Tensor hidden = select_positions(draft_.forward_sequence(inputs), positions);
    at::Tensor teacher;
    if (distill_weight_ > 0) {
        at::NoGradGuard no_grad;
        teacher = target_.logits(select_positions(target_.forward_sequence(inputs), positions));
    }
    const double w = distill_weight_;
    if (code_digits_) {
        const at::Tensor head_logits = at::linear(hidden, digit_head_.weight, digit_head_.bias);
        const double count = static_cast<double>(std::max<int64_t>(labels.size(0), 1));
        const at::Tensor hard = code_digits_->negative_log_likelihood(head_logits, labels).sum() / count;
        if (w == 0) return hard;
        at::Tensor marginals;
        {
            at::NoGradGuard no_grad;
            marginals = code_digits_->marginals(at::softmax(teacher, -1));
        }
        return (1.0 - w) * hard + w * (code_digits_->cross_entropy(head_logits, marginals).sum() / count);
    }
    const at::Tensor logits = draft_.logits(hidden);
    at::Tensor loss = masked_cross_entropy(logits, labels);
    if (w > 0) loss = (1.0 - w) * loss + w * masked_kl_divergence(teacher, logits, labels);
    return loss;
}

void ShallowDraftTask::evaluate(const Batch& batch, Metrics& metrics) {
    const at::Tensor inputs = batch.inputs();
    const LabelledPositions positions = labelled_positions(batch.labels(1));
    const at::Tensor& labels = positions.labels;
    const at::Tensor logits = vocabulary_logits(select_positions(draft_.forward_sequence(inputs), positions));
    const at::Tensor teacher = target_.logits(select_positions(target_.forward_sequence(inputs), positions));
    add_prediction_metrics(logits, labels, metrics);
    const at::Tensor mask = labels.ne(ignore_label);
    const auto count = static_cast<double>(mask.sum().item<int64_t>());
    metrics.add("agreement with the target's top-1", Unit::fraction,
                (logits.argmax(-1).eq(teacher.argmax(-1)) & mask).sum().item<double>(), count);
    metrics.add("acceptance, sum min(p_target, q_draft)", Unit::fraction,
                at::minimum(at::softmax(teacher, -1), at::softmax(logits, -1)).sum(-1).sum().item<double>(), count);
    metrics.add("KL(target || draft)", Unit::nats, masked_kl_divergence(teacher, logits, labels).item<double>() * count,
                count);
    add_prediction_metrics(teacher, labels, metrics, "target ");
}

void ShallowDraftTask::save(const std::filesystem::path& output) const {
    char weight_text[32];
    std::snprintf(weight_text, sizeof(weight_text), "%g", distill_weight_);
    std::vector<std::pair<std::string, std::string>> metadata{
        {"cadenza.kind", "shallow_draft"},
        {"cadenza.draft_layers", format_index_list(layout_.layers)},
        {"cadenza.train_layers", format_index_list(layout_.train_layers)},
        {"cadenza.target", target_path_.string()},
        {"cadenza.distill_weight", weight_text}};
    if (!code_digits_) {
        save_model_directory(output, draft_.weights(), metadata);
        return;
    }
    for (auto& entry : drafts::code_grid_metadata(code_digits_->grid())) metadata.push_back(std::move(entry));
    llama::LlamaWeights weights = draft_.weights();
    weights.config.tie_word_embeddings = true;
    weights.lm_head = weights.embed_tokens;
    save_model_directory(output, weights, metadata, {{"digits.weight", digit_head_.weight}, {"digits.bias", digit_head_.bias}});
}

}  // namespace cadenza::training
