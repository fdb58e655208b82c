#include "draft_heads.h"

#include <cmath>

#include "error.h"
#include "losses.h"
#include "safetensors.h"

namespace cadenza::training {
namespace {

std::string weight_name(int64_t i) { return "heads." + std::to_string(i) + ".linear.weight"; }
std::string bias_name(int64_t i) { return "heads." + std::to_string(i) + ".linear.bias"; }

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
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
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
        return result;
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    } catch (const std::logic_error&) {  // stoll
        throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": cadenza.heads / cadenza.hidden_size are not integers");
    }
}

DraftHeadsTask::DraftHeadsTask(llama::LlamaWeights target, const std::string& kind, int64_t heads,
                               std::filesystem::path target_path)
    : target_(target, target.config.max_position_embeddings),
      heads_(DraftHeads::identity(kind, heads, target.config.hidden_size)),
      target_path_(std::move(target_path)) {}

std::vector<TrainableParameter> DraftHeadsTask::parameters() {
    std::vector<TrainableParameter> parameters;
    for (int64_t i = 0; i < heads_.count(); ++i) {
        parameters.push_back({weight_name(i), heads_.weights[static_cast<size_t>(i)], true});
        parameters.push_back({bias_name(i), heads_.biases[static_cast<size_t>(i)], false});
    }
    return parameters;
}

at::Tensor DraftHeadsTask::loss(const Batch& batch) {
    at::Tensor hidden;
    {
        at::NoGradGuard no_grad;
        hidden = target_.forward_sequence(batch.inputs());
    }
    at::Tensor loss;
    for (int64_t i = 0; i < heads_.count(); ++i) {
        const LabelledPositions positions = labelled_positions(batch.labels(i + 2));
        const at::Tensor logits = target_.logits(heads_.apply(i, select_positions(hidden, positions)));
        const at::Tensor term = head_loss_weight(heads_.kind, i) * masked_cross_entropy(logits, positions.labels);
        loss = loss.defined() ? loss + term : term;
    }
    return loss;
}

void DraftHeadsTask::evaluate(const Batch& batch, Metrics& metrics) {
    const at::Tensor hidden = target_.forward_sequence(batch.inputs());
    const LabelledPositions next = labelled_positions(batch.labels(1));
    add_prediction_metrics(target_.logits(select_positions(hidden, next)), next.labels, metrics, "target (t+1) ", 5);
    for (int64_t i = 0; i < heads_.count(); ++i) {
        const LabelledPositions positions = labelled_positions(batch.labels(i + 2));
        add_prediction_metrics(target_.logits(heads_.apply(i, select_positions(hidden, positions))), positions.labels,
                               metrics, "head " + std::to_string(i) + " (t+" + std::to_string(i + 2) + ") ", 5);
    }
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
