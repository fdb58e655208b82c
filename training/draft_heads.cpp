#include "draft_heads.h"

#include <algorithm>
#include <cmath>

#include "code_digit_output.h"
#include "error.h"
#include "losses.h"
#include "safetensors.h"

namespace cadenza::training {
namespace {

std::string weight_name(int64_t i) { return "heads." + std::to_string(i) + ".linear.weight"; }
std::string bias_name(int64_t i) { return "heads." + std::to_string(i) + ".linear.bias"; }
std::string digit_weight_name(int64_t i) { return "heads." + std::to_string(i) + ".digits.weight"; }
std::string digit_bias_name(int64_t i) { return "heads." + std::to_string(i) + ".digits.bias"; }

// The mean over the labelled positions of a per-position loss [N]; 0 when N = 0.
at::Tensor mean_over_positions(const at::Tensor& per_position) {
    return per_position.sum() / static_cast<double>(std::max<int64_t>(per_position.size(0), 1));
}

}  // namespace

double head_loss_weight(const std::string& kind, int64_t head) {
    if (kind == "mtp") return 1.0;
    if (kind == "medusa") return std::pow(0.8, static_cast<double>(head + 1));
    throw Error(CDZ_STATUS_INVALID_ARGUMENT, "draft heads: unknown kind '" + kind + "' (mtp or medusa)");
}

DraftHeads DraftHeads::identity(const std::string& kind, int64_t heads, int64_t hidden_size) {
    head_loss_weight(kind, 0);  // validates the kind
    if (heads < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--heads must be at least 1");
    DraftHeads result;
    result.kind = kind;
    for (int64_t i = 0; i < heads; ++i) {
        result.weights.push_back(at::zeros({hidden_size, hidden_size}, at::kFloat));
        result.biases.push_back(at::zeros({hidden_size}, at::kFloat));
    }
    return result;
}

DraftHeads DraftHeads::identity_with_code_digits(const std::string& kind, int64_t heads, const at::Tensor& target_table,
                                                 const drafts::CodeGrid& grid) {
    const CodeDigitOutput initial = CodeDigitOutput::from_table(target_table, grid);
    DraftHeads result = identity(kind, heads, target_table.size(1));
    result.code_digits = std::make_shared<const drafts::CodeDigitDistribution>(grid);
    for (int64_t i = 0; i < heads; ++i) {
        result.digit_weights.push_back(initial.weight.clone());
        result.digit_biases.push_back(initial.bias.clone());
    }
    return result;
}

at::Tensor DraftHeads::vocabulary_logits(int64_t head, const at::Tensor& states, const llama::LlamaModel& target) const {
    if (!code_digits) return target.logits(states);
    const auto i = static_cast<size_t>(head);
    return code_digits->log_probabilities(at::linear(states, digit_weights[i], digit_biases[i]));
}

std::string DraftHeads::output_description() const {
    return code_digits ? "code digits " + code_digits->grid().levels_text() + " from token " +
                             std::to_string(code_digits->grid().code_offset)
                       : std::string("vocabulary");
}

at::Tensor DraftHeads::apply(int64_t head, const at::Tensor& hidden) const {
    const auto i = static_cast<size_t>(head);
    return hidden + at::silu(at::linear(hidden, weights[i], biases[i]));
}

void DraftHeads::save(const std::filesystem::path& path,
                      const std::vector<std::pair<std::string, std::string>>& metadata) const {
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("cadenza.kind", kind);
    writer.set_metadata("cadenza.heads", std::to_string(count()));
    writer.set_metadata("cadenza.hidden_size", std::to_string(count() > 0 ? weights[0].size(0) : 0));
    if (code_digits) {
        for (const auto& [key, value] : drafts::code_grid_metadata(code_digits->grid())) writer.set_metadata(key, value);
        writer.set_metadata("cadenza.vocab_size", std::to_string(code_digits->grid().vocab_size));
    }
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
    for (size_t i = 0; i < digit_weights.size(); ++i) {
        const at::Tensor w = digit_weights[i].detach().to(at::kCPU, at::kFloat).contiguous();
        const at::Tensor b = digit_biases[i].detach().to(at::kCPU, at::kFloat).contiguous();
        writer.add_f32(digit_weight_name(static_cast<int64_t>(i)), {w.size(0), w.size(1)}, w.data_ptr<float>());
        writer.add_f32(digit_bias_name(static_cast<int64_t>(i)), {b.size(0)}, b.data_ptr<float>());
    }
    for (int64_t i = 0; i < count(); ++i) {
        const at::Tensor w = weights[static_cast<size_t>(i)].detach().to(at::kCPU, at::kFloat).contiguous();
        const at::Tensor b = biases[static_cast<size_t>(i)].detach().to(at::kCPU, at::kFloat).contiguous();
        writer.add_f32(weight_name(i), {w.size(0), w.size(1)}, w.data_ptr<float>());
        writer.add_f32(bias_name(i), {b.size(0)}, b.data_ptr<float>());
    }
    try {
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
        writer.write(path);
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_IO_ERROR, e.what());
    }
}

DraftHeads DraftHeads::load(const std::filesystem::path& path) {
    try {
        const safetensors::File file(path);
        auto meta = [&](const std::string& key) {
            const auto found = file.metadata().find(key);
            if (found == file.metadata().end())
                throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": metadata '" + key + "' is missing");
            return found->second;
        };
        const int64_t heads = std::stoll(meta("cadenza.heads"));
        const int64_t hidden = std::stoll(meta("cadenza.hidden_size"));
        DraftHeads result;
        result.kind = meta("cadenza.kind");
        for (int64_t i = 0; i < heads; ++i) {
            std::vector<float> w = file.read_f32(weight_name(i), {hidden, hidden});
            std::vector<float> b = file.read_f32(bias_name(i), {hidden});
            result.weights.push_back(at::from_blob(w.data(), {hidden, hidden}, at::kFloat).clone());
            result.biases.push_back(at::from_blob(b.data(), {hidden}, at::kFloat).clone());
        }
        const auto vocab = file.metadata().find("cadenza.vocab_size");
        const std::optional<drafts::CodeGrid> grid = drafts::code_grid_of(
            file.metadata(), vocab == file.metadata().end() ? 0 : std::stoll(vocab->second), path.string());
        if (grid) {
            result.code_digits = std::make_shared<const drafts::CodeDigitDistribution>(*grid);
            const int64_t rows = result.code_digits->grid().head_rows();
            for (int64_t i = 0; i < heads; ++i) {
                std::vector<float> w = file.read_f32(digit_weight_name(i), {rows, hidden});
                std::vector<float> b = file.read_f32(digit_bias_name(i), {rows});
                result.digit_weights.push_back(at::from_blob(w.data(), {rows, hidden}, at::kFloat).clone());
                result.digit_biases.push_back(at::from_blob(b.data(), {rows}, at::kFloat).clone());
            }
        }
        return result;
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    } catch (const std::logic_error&) {  // stoll
        throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": cadenza.heads / cadenza.hidden_size are not integers");
    }
}

DraftHeadsTask::DraftHeadsTask(llama::LlamaWeights target, const std::string& kind, int64_t heads,
                               std::filesystem::path target_path, const drafts::CodeGrid* grid, double distill_weight)
    : target_(target, target.config.max_position_embeddings),
      heads_(grid ? DraftHeads::identity_with_code_digits(kind, heads, target.lm_head, *grid)
                  : DraftHeads::identity(kind, heads, target.config.hidden_size)),
      target_path_(std::move(target_path)),
      distill_weight_(distill_weight) {
    if (!(distill_weight >= 0 && distill_weight <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--distill-weight must be in [0, 1]");
}

void DraftHeadsTask::initialize_from(const std::filesystem::path& heads_file) {
    const DraftHeads earlier = DraftHeads::load(heads_file);
    const auto hidden_of = [](const DraftHeads& heads) { return heads.count() > 0 ? heads.weights[0].size(0) : 0; };
    std::string difference;
    if (earlier.kind != heads_.kind)
        difference = "its kind is " + earlier.kind + ", not " + heads_.kind;
    else if (earlier.count() != heads_.count())
        difference = "it has " + std::to_string(earlier.count()) + " heads, not --heads " + std::to_string(heads_.count());
    else if (hidden_of(earlier) != hidden_of(heads_))
        difference = "its hidden size is " + std::to_string(hidden_of(earlier)) + ", the target's " +
                     std::to_string(hidden_of(heads_));
    else if (earlier.output_description() != heads_.output_description())
        difference = "its output is " + earlier.output_description() + ", this run's " + heads_.output_description();
    if (!difference.empty())
        throw Error(CDZ_STATUS_INVALID_CONFIG, heads_file.string() + ": cannot start from it: " + difference);
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < heads_.weights.size(); ++i) {
        heads_.weights[i].copy_(earlier.weights[i]);
        heads_.biases[i].copy_(earlier.biases[i]);
    }
    for (size_t i = 0; i < heads_.digit_weights.size(); ++i) {
        heads_.digit_weights[i].copy_(earlier.digit_weights[i]);
        heads_.digit_biases[i].copy_(earlier.digit_biases[i]);
    }
}

std::vector<TrainableParameter> DraftHeads::parameters() const {
    std::vector<TrainableParameter> parameters;
    for (int64_t i = 0; i < count(); ++i) {
        parameters.push_back({weight_name(i), weights[static_cast<size_t>(i)], true});
        parameters.push_back({bias_name(i), biases[static_cast<size_t>(i)], false});
    }
    for (size_t i = 0; i < digit_weights.size(); ++i) {
        parameters.push_back({digit_weight_name(static_cast<int64_t>(i)), digit_weights[i], true});
        parameters.push_back({digit_bias_name(static_cast<int64_t>(i)), digit_biases[i], false});
    }
    return parameters;
}

at::Tensor DraftHeads::cross_entropy(int64_t head, const at::Tensor& states, const at::Tensor& labels,
                                     const llama::LlamaModel& target) const {
    if (!code_digits) return masked_cross_entropy(target.logits(states), labels);
    const auto i = static_cast<size_t>(head);
    return mean_over_positions(
        code_digits->negative_log_likelihood(at::linear(states, digit_weights[i], digit_biases[i]), labels));
}

void DraftHeads::add_metrics(const at::Tensor& hidden, const at::Tensor& target_p, const Batch& batch,
                             const llama::LlamaModel& target, Metrics& metrics) const {
    for (int64_t i = 0; i < count(); ++i) {
        const LabelledPositions positions = labelled_positions(batch.labels(i + 2));
        const at::Tensor logits = vocabulary_logits(i, apply(i, select_positions(hidden, positions)), target);
        const std::string prefix = "head " + std::to_string(i) + " (t+" + std::to_string(i + 2) + ") ";
        add_prediction_metrics(logits, positions.labels, metrics, prefix, 5);
        // Head i's token t + 2 + i against the target's next-token distribution at t + 1 + i.
        const at::Tensor p = target_p.index_select(0, positions.indices + (i + 1));
        const at::Tensor kept = at::minimum(p, at::softmax(logits, -1)).sum(-1);
        metrics.add(prefix + "acceptance", Unit::fraction, kept.sum().item<double>(), static_cast<double>(kept.size(0)));
    }
}

std::vector<TrainableParameter> DraftHeadsTask::parameters() { return heads_.parameters(); }

std::vector<std::pair<std::string, std::string>> DraftHeadsTask::settings() const {
    return {{"cadenza.train.heads_output", heads_.output_description()},
            {"cadenza.train.distill_weight", std::to_string(distill_weight_)}};
}

at::Tensor DraftHeadsTask::loss(const Batch& batch) {
    at::Tensor hidden, teacher;  // teacher: per flat position, log-probabilities [B*T, V] or marginals [B*T, R]
    {
        at::NoGradGuard no_grad;
        hidden = target_.forward_sequence(batch.inputs());
        if (distill_weight_ > 0) {
            const at::Tensor log_p = at::log_softmax(target_.logits(hidden.reshape({-1, hidden.size(-1)})), -1);
            teacher = heads_.code_digits ? heads_.code_digits->marginals(log_p.exp()) : log_p;
        }
    }
    const double w = distill_weight_;
    at::Tensor loss;
    for (int64_t i = 0; i < heads_.count(); ++i) {
        const LabelledPositions positions = labelled_positions(batch.labels(i + 2));
        const at::Tensor states = heads_.apply(i, select_positions(hidden, positions));
        const at::Tensor hard = heads_.cross_entropy(i, states, positions.labels, target_);
        at::Tensor soft;
        if (w > 0) {
            // The target's distribution for token t + 2 + i is its next-token distribution at t + 1 + i.
            const at::Tensor taught = teacher.index_select(0, positions.indices + (i + 1));
            if (heads_.code_digits) {
                const auto h = static_cast<size_t>(i);
                const at::Tensor head_logits = at::linear(states, heads_.digit_weights[h], heads_.digit_biases[h]);
                soft = mean_over_positions(heads_.code_digits->cross_entropy(head_logits, taught));
            } else {
                soft = mean_over_positions(-(taught.exp() * at::log_softmax(target_.logits(states), -1)).sum(-1));
            }
        }
        const at::Tensor combined = w > 0 ? (1 - w) * hard + w * soft : hard;
        const at::Tensor term = head_loss_weight(heads_.kind, i) * combined;
        loss = loss.defined() ? loss + term : term;
    }
    return loss;
}

void DraftHeadsTask::evaluate(const Batch& batch, Metrics& metrics) {
    const at::Tensor hidden = target_.forward_sequence(batch.inputs());
    const at::Tensor target_p = at::softmax(target_.logits(hidden.reshape({-1, hidden.size(-1)})), -1);
    const LabelledPositions next = labelled_positions(batch.labels(1));
    add_prediction_metrics(target_.logits(select_positions(hidden, next)), next.labels, metrics, "target (t+1) ", 5);
    heads_.add_metrics(hidden, target_p, batch, target_, metrics);
}

void DraftHeadsTask::save(const std::filesystem::path& output) const {
    heads_.save(output, {{"cadenza.target", target_path_.string()}});
}

std::filesystem::path DraftHeadsTask::state_path(const std::filesystem::path& output) const {
    std::filesystem::path path = output;
    path.replace_extension(".training_state.safetensors");
    return path;
}

}  // namespace cadenza::training
