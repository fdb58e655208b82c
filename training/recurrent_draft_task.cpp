#include "recurrent_draft_task.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "code_digit_output.h"
#include "error.h"
#include "losses.h"

namespace cadenza::training {
namespace {

constexpr int64_t group_rows_per_level = 1024;

double step_loss_weight(int64_t step) { return std::pow(0.8, static_cast<double>(step - 1)); }

at::Tensor mean_over_positions(const at::Tensor& per_position) {
    return per_position.sum() / static_cast<double>(std::max<int64_t>(per_position.size(0), 1));
}

std::string step_prefix(int64_t step) {
    return "step " + std::to_string(step) + " (t+" + std::to_string(step + 1) + ") ";
}

}  // namespace

RecurrentDraftTask::RecurrentDraftTask(llama::LlamaWeights target, int64_t cell_size, int64_t depth,
                                       const drafts::CodeGrid& grid, std::filesystem::path target_path,
                                       double distill_weight, SamplingSettings sampling, uint64_t seed,
                                       DistillDivergence divergence)
    : target_(target, target.config.max_position_embeddings),
      embedding_(target.embed_tokens),
      target_path_(std::move(target_path)),
      distill_weight_(distill_weight),
      sampling_(sampling),
      divergence_(divergence) {
    if (!(distill_weight >= 0 && distill_weight <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--distill-weight must be in [0, 1]");
    check_sampling_settings(sampling_);
    const CodeDigitOutput initial = CodeDigitOutput::from_table(target.lm_head, grid);
    draft_ = drafts::RecurrentDraft::initial(target.config.hidden_size, cell_size, depth, grid, initial.weight,
                                             initial.bias, seed);
}

void RecurrentDraftTask::set_groups(const std::filesystem::path& groups_file) {
    groups_ = std::make_shared<const GroupCoarsening>(pcg::read_token_groups(groups_file), vocab_size(),
                                                      groups_file.string());
    groups_path_ = groups_file;
}

void RecurrentDraftTask::initialize_from(const std::filesystem::path& draft_file) {
    drafts::RecurrentDraft earlier = drafts::RecurrentDraft::load(draft_file, vocab_size());
    // The cell's weights are shared by its steps: a draft trained deeper can
    // start a run that trains fewer steps.
    const int64_t earlier_depth = earlier.depth;
    earlier.depth = draft_.depth;
    if (earlier.description() != draft_.description() || earlier_depth < draft_.depth) {
        earlier.depth = earlier_depth;
        throw Error(CDZ_STATUS_INVALID_CONFIG, draft_file.string() + ": cannot start from it: it is a " +
                                                   earlier.description() + " draft, this run's a " + draft_.description() +
                                                   " (the same cell and grid, at least as deep)");
    }
    at::NoGradGuard no_grad;
    const auto from = earlier.named_tensors();
    const auto to = draft_.named_tensors();
    for (size_t i = 0; i < to.size(); ++i) to[i].second.copy_(from[i].second);
}

std::vector<TrainableParameter> RecurrentDraftTask::parameters() {
    std::vector<TrainableParameter> parameters;
    for (const auto& [name, tensor] : draft_.named_tensors()) parameters.push_back({name, tensor, tensor.dim() == 2});
    return parameters;
}

std::vector<std::pair<std::string, std::string>> RecurrentDraftTask::settings() const {
    std::vector<std::pair<std::string, std::string>> settings = {
        {"cadenza.train.recurrent", draft_.description()},
        {"cadenza.train.distill_weight", std::to_string(distill_weight_)}};
    if (draft_.table_scored) settings.push_back({"cadenza.train.table_scoring", "target_output_table"});
    // Only when set, so that checkpoints from before the options still resume.
    if (!sampling_.is_plain()) settings.push_back({"cadenza.train.sampling", describe(sampling_)});
    if (divergence_ == DistillDivergence::total_variation)
        settings.push_back({"cadenza.train.distill_divergence", "total-variation"});
    if (divergence_ == DistillDivergence::group_total_variation)
        settings.push_back({"cadenza.train.distill_divergence", "group-total-variation over " + groups_path_.string()});
    return settings;
}

at::Tensor RecurrentDraftTask::sampled_digit_logits(const at::Tensor& states) const {
    const at::Tensor logits = draft_.digit_logits(states);
    return sampling_.temperature == 1.0 ? logits : logits / sampling_.temperature;
}

at::Tensor RecurrentDraftTask::sampled_table_logits(const at::Tensor& states) const {
    const at::Tensor logits = target_.logits(states);
    return sampling_.temperature == 1.0 ? logits : logits / sampling_.temperature;
}

at::Tensor RecurrentDraftTask::target_logits(const at::Tensor& hidden) const {
    return target_.logits(hidden.reshape({-1, hidden.size(-1)}));
}

std::vector<at::Tensor> RecurrentDraftTask::walk(const at::Tensor& hidden, const Batch& batch) const {
    const int64_t batch_size = batch.tokens.size(0), time = batch.time(), width = hidden.size(-1);
    // Step k reads token t + k, past the window's end for the last positions
    // (whose predictions are never labelled): pad the tokens to reach it.
    const at::Tensor tokens =
        at::cat({batch.tokens, at::zeros({batch_size, draft_.depth}, batch.tokens.options())}, 1);
    std::vector<at::Tensor> states;
    at::Tensor state = hidden.reshape({-1, width});
    for (int64_t k = 1; k <= draft_.depth; ++k) {
        const at::Tensor read = at::embedding(embedding_, tokens.slice(1, k, k + time)).reshape({-1, width});
        state = draft_.advance(state, read);
        states.push_back(state);
    }
    return states;
}

at::Tensor RecurrentDraftTask::loss(const Batch& batch) {
    // teacher per flat position: the target's marginals [B*T, R] for
    // cross-entropy, its whole distribution [B*T, V] for total variation.
    at::Tensor hidden, teacher, table_teacher;
    const bool whole_distribution = divergence_ != DistillDivergence::cross_entropy;
    const bool table = draft_.table_scored;
    if (divergence_ == DistillDivergence::group_total_variation && !groups_)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "group total variation needs acceptor.pcg's groups (--groups)");
    {
        at::NoGradGuard no_grad;
        hidden = target_.forward_sequence(batch.inputs());
        if (distill_weight_ > 0) {
            teacher = sampling_distribution(target_logits(hidden), sampling_);
            if (table) table_teacher = teacher;
            if (!whole_distribution) teacher = draft_.digits->marginals(teacher);
        }
    }
    const std::vector<at::Tensor> states = walk(hidden, batch);
    const double w = distill_weight_;
    at::Tensor loss;
    for (int64_t k = 1; k <= draft_.depth; ++k) {
        const LabelledPositions positions = labelled_positions(batch.labels(k + 1));
        const at::Tensor logits = sampled_digit_logits(states[static_cast<size_t>(k - 1)].index_select(0, positions.indices));
        at::Tensor term = mean_over_positions(draft_.digits->negative_log_likelihood(logits, positions.labels));
        if (w > 0) {
            // The target's distribution of token t + k + 1 is its next-token distribution at t + k.
            const at::Tensor taught = teacher.index_select(0, positions.indices + k);
            at::Tensor divergence;
            if (divergence_ == DistillDivergence::cross_entropy) {
                divergence = draft_.digits->cross_entropy(logits, taught);
            } else if (divergence_ == DistillDivergence::total_variation) {
                divergence = 1.0 - at::minimum(taught, draft_.digits->log_probabilities(logits).exp()).sum(-1);
            } else {
                // Every stride-th position (offset by the step): the group
                // sums cost ~0.2 ms a row, so a step keeps to ~1,024 rows a level.
                const int64_t count = logits.size(0);
                const int64_t stride = std::max<int64_t>(1, (count + group_rows_per_level - 1) / group_rows_per_level);
                const at::Tensor rows = at::arange(k % stride, count, stride, positions.indices.options());
                const at::Tensor q = draft_.digits->log_probabilities(logits.index_select(0, rows)).exp();
                divergence = 1.0 - groups_->acceptance(taught.index_select(0, rows), q);
            }
            term = (1 - w) * term + w * mean_over_positions(divergence);
        }
        if (table) {
            const at::Tensor log_q = at::log_softmax(
                sampled_table_logits(states[static_cast<size_t>(k - 1)].index_select(0, positions.indices)), -1);
            at::Tensor table_term = mean_over_positions(-log_q.gather(1, positions.labels.unsqueeze(1)).squeeze(1));
            if (w > 0) {
                const at::Tensor taught = table_teacher.index_select(0, positions.indices + k);
                table_term = (1 - w) * table_term + w * mean_over_positions(-(taught * log_q).sum(-1));
            }
            term = term + table_term;
        }
        term = step_loss_weight(k) * term;
        loss = loss.defined() ? loss + term : term;
    }
    return loss;
}

void RecurrentDraftTask::evaluate(const Batch& batch, Metrics& metrics) {
    const at::Tensor hidden = target_.forward_sequence(batch.inputs());
    const at::Tensor logits = target_logits(hidden);
    const at::Tensor target_p = sampling_distribution(logits, sampling_);
    const LabelledPositions next = labelled_positions(batch.labels(1));
    add_prediction_metrics(logits.index_select(0, next.indices), next.labels, metrics, "target (t+1) ", 5);
    // About the best a code-digit head can reach: the acceptance of the
    // product of the target's own digit marginals (KL's optimum) against the target.
    {
        const at::Tensor p = target_p.index_select(0, next.indices);
        const at::Tensor product = draft_.digits->log_probabilities(draft_.digits->marginals(p).clamp_min(1e-30).log()).exp();
        const at::Tensor kept = at::minimum(p, product).sum(-1);
        metrics.add("target (t+1) code-digit ceiling", Unit::fraction, kept.sum().item<double>(),
                    static_cast<double>(kept.size(0)));
    }
    const std::vector<at::Tensor> states = walk(hidden, batch);
    for (int64_t k = 1; k <= draft_.depth; ++k) {
        const LabelledPositions positions = labelled_positions(batch.labels(k + 1));
        const at::Tensor log_q = draft_.digits->log_probabilities(
            sampled_digit_logits(states[static_cast<size_t>(k - 1)].index_select(0, positions.indices)));
        add_prediction_metrics(log_q, positions.labels, metrics, step_prefix(k), 5);
        const at::Tensor p = target_p.index_select(0, positions.indices + k);
        const at::Tensor q = log_q.exp();
        const at::Tensor kept = at::minimum(p, q).sum(-1);
        metrics.add(step_prefix(k) + "acceptance", Unit::fraction, kept.sum().item<double>(),
                    static_cast<double>(kept.size(0)));
        if (draft_.table_scored) {
            const at::Tensor table_logits =
                target_.logits(states[static_cast<size_t>(k - 1)].index_select(0, positions.indices));
            const at::Tensor table_kept = at::minimum(p, sampling_distribution(table_logits, sampling_)).sum(-1);
            metrics.add(step_prefix(k) + "table acceptance", Unit::fraction, table_kept.sum().item<double>(),
                        static_cast<double>(table_kept.size(0)));
            for (const int64_t count : {16, 64, 256}) {
                if (count >= vocab_size()) break;
                const at::Tensor candidates = std::get<1>(log_q.topk(count, -1));
                const at::Tensor restricted = at::full_like(table_logits, -std::numeric_limits<float>::infinity())
                                                  .scatter_(1, candidates, table_logits.gather(1, candidates));
                const at::Tensor kept_k = at::minimum(p, sampling_distribution(restricted, sampling_)).sum(-1);
                metrics.add(step_prefix(k) + "top-" + std::to_string(count) + " candidates acceptance", Unit::fraction,
                            kept_k.sum().item<double>(), static_cast<double>(kept_k.size(0)));
            }
        }
        if (groups_) {
            const at::Tensor group_kept = groups_->acceptance(p, q);
            metrics.add(step_prefix(k) + "group acceptance", Unit::fraction, group_kept.sum().item<double>(),
                        static_cast<double>(group_kept.size(0)));
        }
    }
}

void RecurrentDraftTask::save(const std::filesystem::path& output) const {
    draft_.save(output, {{"cadenza.target", target_path_.string()}});
}

std::filesystem::path RecurrentDraftTask::state_path(const std::filesystem::path& output) const {
    std::filesystem::path path = output;
    path.replace_extension(".training_state.safetensors");
    return path;
}

}  // namespace cadenza::training
