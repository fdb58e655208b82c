#include "trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include <torch/optim/adamw.h>

#include "error.h"
#include "lr_schedule.h"
#include "progress.h"
#include "safetensors.h"

namespace cadenza::training {
namespace {

constexpr double adam_beta1 = 0.9;
constexpr double adam_beta2 = 0.95;
constexpr double adam_eps = 1e-8;

std::string exact(double value) {
    char text[40];
    std::snprintf(text, sizeof(text), "%.17g", value);
    return text;
}

constexpr const char* length_buckets_key = "cadenza.train.length_buckets";
// Settings written only when used, so that older checkpoints still resume.
const char* const optional_setting_keys[] = {length_buckets_key, "cadenza.train.guided_attention",
                                             "cadenza.train.code_digits", "cadenza.train.code_input_noise",
                                             "cadenza.train.text_dropout", "cadenza.train.self_feeding",
                                             "cadenza.train.split_seed"};

// The settings a resumed run must share with the checkpoint for the result
// to equal an uninterrupted run.
std::vector<std::pair<std::string, std::string>> run_settings(const TrainingTask& task, const TokenCorpus& corpus,
                                                               const TrainOptions& o) {
    std::vector<std::pair<std::string, std::string>> settings{
        {"cadenza.kind", task.kind()},
        {"cadenza.train.batch", std::to_string(o.batch)},
        {"cadenza.train.seq_len", std::to_string(o.seq_len)},
        {"cadenza.train.lr", exact(o.lr)},
        {"cadenza.train.warmup", std::to_string(o.warmup)},
        {"cadenza.train.min_lr_ratio", exact(o.min_lr_ratio)},
        {"cadenza.train.weight_decay", exact(o.weight_decay)},
        {"cadenza.train.clip", exact(o.clip)},
        {"cadenza.train.seed", std::to_string(o.seed)},
        {"cadenza.train.holdout", exact(o.holdout)},
        {"cadenza.train.corpus_fingerprint", std::to_string(corpus.fingerprint())},
    };
    // Only when set, so that checkpoints from before the option still resume.
    if (o.length_buckets) settings.push_back({length_buckets_key, "1"});
    if (o.split_seed) settings.push_back({"cadenza.train.split_seed", std::to_string(*o.split_seed)});
    for (auto& setting : task.settings()) settings.push_back(std::move(setting));
    return settings;
}

void check_options(const TrainOptions& o, const TrainingTask& task) {
    auto require = [](bool ok, const std::string& message) {
        if (!ok) throw Error(CDZ_STATUS_INVALID_ARGUMENT, message);
    };
    require(o.steps >= 1, "--steps must be at least 1");
    require(o.batch >= 1, "--batch must be at least 1");
    require(o.seq_len >= 1, "--seq-len must be at least 1");
    require(o.seq_len <= task.max_positions(),
            "--seq-len " + std::to_string(o.seq_len) + " exceeds the model's max_position_embeddings (" +
                std::to_string(task.max_positions()) + ")");
    require(std::isfinite(o.lr) && o.lr >= 0, "--lr must be a non-negative number");
    require(o.warmup >= 0, "--warmup must be non-negative");
    require(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1, "the final learning-rate ratio must be in [0, 1]");
    require(std::isfinite(o.weight_decay) && o.weight_decay >= 0, "--weight-decay must be non-negative");
    require(std::isfinite(o.clip), "--clip must be a number (<= 0 disables clipping)");
    require(o.holdout >= 0 && o.holdout < 1, "--holdout must be in [0, 1)");
    require(o.checkpoint_every >= 0, "--checkpoint-every must be non-negative");
    require(o.stop_after >= 0, "--stop-after must be non-negative");
}

std::string state_key(const at::Tensor& tensor) { return c10::guts::to_string(tensor.unsafeGetTensorImpl()); }

std::vector<int64_t> shape_of(const at::Tensor& tensor) { return {tensor.sizes().begin(), tensor.sizes().end()}; }

void add_tensor(safetensors::Writer& writer, const std::string& name, const at::Tensor& tensor) {
    const at::Tensor cpu = tensor.detach().to(at::kCPU, at::kFloat).contiguous();
    writer.add_f32(name, shape_of(cpu), cpu.data_ptr<float>());
}

void write_state(const std::filesystem::path& path, const std::vector<TrainableParameter>& parameters,
                 torch::optim::AdamW& optimizer, int64_t step,
                 const std::vector<std::pair<std::string, std::string>>& settings, int64_t total_steps) {
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    for (const auto& [key, value] : settings) writer.set_metadata(key, value);
    writer.set_metadata("cadenza.train.step", std::to_string(step));
    writer.set_metadata("cadenza.train.steps", std::to_string(total_steps));
    auto& states = optimizer.state();
    for (const auto& p : parameters) {
        add_tensor(writer, "param/" + p.name, p.tensor);
        const auto found = states.find(state_key(p.tensor));
        if (found == states.end()) continue;
        const auto& state = static_cast<const torch::optim::AdamWParamState&>(*found->second);
        add_tensor(writer, "exp_avg/" + p.name, state.exp_avg());
        add_tensor(writer, "exp_avg_sq/" + p.name, state.exp_avg_sq());
        const int64_t adam_step = state.step();
        writer.add_i64("adam_step/" + p.name, {1}, &adam_step);
    }
    try {
        writer.write(path);
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_IO_ERROR, e.what());
    }
}

// Restores parameters and optimizer state; returns the checkpoint's step.
int64_t read_state(const std::filesystem::path& path, const std::vector<TrainableParameter>& parameters,
                   torch::optim::AdamW& optimizer, const std::vector<std::pair<std::string, std::string>>& settings,
                   int64_t total_steps, std::ostream& log) {
    try {
        const safetensors::File file(path);
        const auto& metadata = file.metadata();
        auto value_of = [&](const std::string& key) {
            const auto found = metadata.find(key);
            if (found == metadata.end())
                throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": not a cadenza training state (no '" + key + "')");
            return found->second;
        };
        for (const auto& [key, value] : settings) {
            const std::string stored = value_of(key);
            if (stored != value) {
                const std::string what = key == "cadenza.train.corpus_fingerprint" ? "the corpus differs from"
                                                                                   : "'" + key + "' is " + value + ", not";
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, "cannot resume: " + what + " the checkpoint's" +
                                                             (key == "cadenza.train.corpus_fingerprint" ? "" : " " + stored) +
                                                             " (" + path.string() + ")");
            }
        }
        for (const std::string key : optional_setting_keys) {
            const bool set_now = std::any_of(settings.begin(), settings.end(),
                                             [&](const auto& setting) { return setting.first == key; });
            if (metadata.count(key) && !set_now)
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, "cannot resume: the checkpoint was trained with '" + key +
                                                             "' = " + metadata.at(key) + " (" + path.string() + ")");
        }
        const int64_t step = std::stoll(value_of("cadenza.train.step"));
        const int64_t stored_steps = std::stoll(value_of("cadenza.train.steps"));
        if (stored_steps != total_steps)
            log << "note: --steps is " << total_steps << ", the checkpoint's run had " << stored_steps
                << "; the learning-rate schedule changes, so this is not the same run continued\n";

        std::set<std::string> expected;
        for (const auto& p : parameters) expected.insert("param/" + p.name);
        for (const auto& info : file.tensors())
            if (info.name.rfind("param/", 0) == 0 && expected.count(info.name) == 0)
                throw Error(CDZ_STATUS_INVALID_CONFIG,
                            path.string() + ": tensor '" + info.name + "' is not a parameter this run trains");

        at::NoGradGuard no_grad;
        auto& states = optimizer.state();
        states.clear();
        auto load = [&](const std::string& name, const at::Tensor& like) {
            std::vector<float> values = file.read_f32(name, shape_of(like));
            return at::from_blob(values.data(), like.sizes(), at::kFloat).clone().to(like.device());
        };
        for (const auto& p : parameters) {
            p.tensor.detach().copy_(load("param/" + p.name, p.tensor));
            if (!file.contains("exp_avg/" + p.name)) continue;
            auto state = std::make_unique<torch::optim::AdamWParamState>();
            state->exp_avg(load("exp_avg/" + p.name, p.tensor));
            state->exp_avg_sq(load("exp_avg_sq/" + p.name, p.tensor));
            state->step(file.read_i64("adam_step/" + p.name, {1}).at(0));
            states[state_key(p.tensor)] = std::move(state);
        }
        return step;
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

double clip_gradients(const std::vector<TrainableParameter>& parameters, double max_norm) {
    std::vector<at::Tensor> norms;
    for (const auto& p : parameters)
        if (p.tensor.grad().defined()) norms.push_back(p.tensor.grad().norm());
    if (norms.empty()) return 0.0;
    const double total = at::stack(norms).norm().item<double>();
    if (max_norm > 0 && total > max_norm) {
        const double scale = max_norm / (total + 1e-6);
        for (const auto& p : parameters)
            if (p.tensor.grad().defined()) p.tensor.mutable_grad().mul_(scale);
    }
    return total;
}

// The unigram baseline on the held-out labels: add-one-half smoothed counts
// of the training labels; accuracy of always guessing the most frequent.
void add_unigram_baseline(const std::vector<const TokenSequence*>& train, const std::vector<Batch>& heldout,
                          int64_t vocab, Metrics& metrics) {
    std::vector<double> counts(static_cast<size_t>(vocab), 0.5);
    for (const TokenSequence* s : train)
        for (size_t t = std::max<int64_t>(1, s->prompt_length); t < s->tokens.size(); ++t)
            counts[static_cast<size_t>(s->tokens[t])] += 1;
    double total = 0;
    for (double c : counts) total += c;
    const auto best = static_cast<int64_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
    at::Tensor log_probability = at::empty({vocab}, at::kDouble);
    for (int64_t v = 0; v < vocab; ++v) log_probability[v] = std::log(counts[static_cast<size_t>(v)] / total);
    for (const auto& batch : heldout) {
        const at::Tensor labels = batch.labels(1).reshape({-1});
        const at::Tensor mask = labels.ne(ignore_label);
        const at::Tensor kept = labels.masked_select(mask);
        const auto count = static_cast<double>(kept.numel());
        metrics.add("unigram baseline loss", Unit::nats, -log_probability.index_select(0, kept).sum().item<double>(), count);
        metrics.add("unigram baseline accuracy", Unit::fraction, kept.eq(best).sum().item<double>(), count);
    }
}

// One row of the held-out curve: the step and every metric's mean, under a
// header of their names written with the first row.
void append_curve_row(const std::filesystem::path& path, int64_t step, const Metrics& metrics) {
    const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
    std::ofstream out(path, std::ios::app);
    if (!out) throw Error(CDZ_STATUS_IO_ERROR, path.string() + ": cannot write the held-out curve");
    if (fresh) {
        out << "step";
        for (const auto& entry : metrics.entries()) out << '\t' << entry.name;
        out << '\n';
    }
    out << step;
    for (const auto& entry : metrics.entries()) out << '\t' << exact(entry.mean());
    out << '\n';
    if (!out.flush()) throw Error(CDZ_STATUS_IO_ERROR, path.string() + ": cannot write the held-out curve");
}

}  // namespace

std::filesystem::path heldout_curve_path(const std::filesystem::path& state_path) {
    std::string name = state_path.filename().string();
    const std::string suffix = "training_state.safetensors";
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        name.replace(name.size() - suffix.size(), suffix.size(), "heldout.tsv");
    else
        name += ".heldout.tsv";
    return state_path.parent_path() / name;
}

TrainResult train(TrainingTask& task, const TokenCorpus& corpus, const TrainOptions& options,
                  const std::filesystem::path& output, std::ostream& log) {
    check_options(options, task);
    at::manual_seed(options.seed);
    const CorpusSplit split = split_corpus(corpus, options.holdout, options.split_seed.value_or(options.seed));
    if (split.train.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, corpus.name + ": no training sequences");

    const std::filesystem::path state_path = task.state_path(output);
    const bool state_exists = std::filesystem::exists(state_path);
    if (options.resume && !state_exists)
        throw Error(CDZ_STATUS_NOT_FOUND, "--resume: no training state at " + state_path.string());
    if (!options.resume && state_exists)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, state_path.string() +
                                                     " exists: pass --resume to continue that run, or remove it to "
                                                     "start afresh");

    std::vector<TrainableParameter> parameters = task.parameters();
    {
        std::set<std::string> names;
        std::set<const void*> storages;
        for (auto& p : parameters) {
            if (!names.insert(p.name).second || !storages.insert(p.tensor.unsafeGetTensorImpl()).second)
                throw Error(CDZ_STATUS_INTERNAL, "training: parameter '" + p.name + "' is listed twice");
            p.tensor.requires_grad_(true);
        }
    }
    std::vector<at::Tensor> decayed, not_decayed;
    for (const auto& p : parameters) (p.decay ? decayed : not_decayed).push_back(p.tensor);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    auto make_options = [&](double decay) {
        return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(options.lr)
                                                                .betas({adam_beta1, adam_beta2})
                                                                .eps(adam_eps)
                                                                .weight_decay(decay));
    };
    if (!decayed.empty()) groups.emplace_back(decayed, make_options(options.weight_decay));
    if (!not_decayed.empty()) groups.emplace_back(not_decayed, make_options(0.0));
    torch::optim::AdamW optimizer(groups, torch::optim::AdamWOptions(options.lr)
                                              .betas({adam_beta1, adam_beta2})
                                              .eps(adam_eps)
                                              .weight_decay(options.weight_decay));

    const auto settings = run_settings(task, corpus, options);
    TrainResult result;
    result.train_sequences = static_cast<int64_t>(split.train.size());
    result.heldout_sequences = static_cast<int64_t>(split.heldout.size());
    if (options.resume) {
        result.first_step = read_state(state_path, parameters, optimizer, settings, options.steps, log);
        log << options.label << ": resuming at step " << result.first_step << " of " << options.steps << " from "
            << state_path.string() << '\n';
    }
    const std::filesystem::path parent = state_path.parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);

    const LrSchedule schedule(options.lr, options.warmup, options.steps, options.min_lr_ratio);
    const BatchSampler sampler(split.train, options.batch, options.seq_len, options.seed, options.length_buckets);
    int64_t last_step = std::max(options.steps, result.first_step);
    if (options.stop_after > 0) last_step = std::min(last_step, std::max(options.stop_after, result.first_step));

    // Held-out evaluation: the split's held-out part, or every sequence of --eval-corpus.
    std::vector<const TokenSequence*> evaluated = split.heldout;
    TokenCorpus eval_corpus;
    if (!options.eval_corpus.empty()) {
        eval_corpus = load_token_corpus(options.eval_corpus);
        eval_corpus.check_vocabulary(task.vocab_size(), "the model");
        evaluated.clear();
        for (const auto& sequence : eval_corpus.sequences) evaluated.push_back(&sequence);
        result.heldout_sequences = static_cast<int64_t>(evaluated.size());
    }
    // Cut once, for the evaluations during the run (--eval-every) and the final one.
    std::vector<Batch> heldout;
    auto heldout_batches = [&]() -> const std::vector<Batch>& {
        if (heldout.empty()) heldout = evaluation_batches(evaluated, options.batch, options.seq_len);
        return heldout;
    };
    auto evaluate_for_curve = [&](int64_t at_step) {
        at::NoGradGuard no_grad;
        Metrics metrics;
        for (const auto& batch : heldout_batches()) task.evaluate(batch, metrics);
        append_curve_row(heldout_curve_path(state_path), at_step, metrics);
        log << options.label << ": step " << at_step << " held out:";
        for (const auto& entry : metrics.entries()) log << (&entry == &metrics.entries().front() ? " " : ", ") << Metrics::format(entry);
        log << '\n' << std::flush;
    };

    Progress progress(options.label, result.first_step, options.steps, options.progress, log);
    std::deque<double> recent;
    int64_t step = result.first_step, checkpointed = result.first_step;
    auto checkpoint = [&] {
        write_state(state_path, parameters, optimizer, step, settings, options.steps);
        task.save(output);
        checkpointed = step;
    };
    while (step < last_step) {
        ++step;
        const double lr = schedule.at(step);
        for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
        const Batch batch = sampler.at_step(step);
        for (const auto& p : parameters) p.tensor.mutable_grad().reset();
        const at::Tensor loss = task.loss(batch);
        loss.backward();
        if (options.clip > 0) clip_gradients(parameters, options.clip);
        optimizer.step();
        const double loss_value = loss.item<double>();
        if (!std::isfinite(loss_value))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, options.label + ": the loss diverged (" + exact(loss_value) +
                                                         ") at step " + std::to_string(step) + "; try a lower --lr");
        recent.push_back(loss_value);
        if (recent.size() > 20) recent.pop_front();
        progress.update(step, loss_value, batch.input_tokens(), lr);
        if (options.checkpoint_every > 0 && step % options.checkpoint_every == 0) checkpoint();
        if (options.eval_every > 0 && step % options.eval_every == 0) evaluate_for_curve(step);
        if (options.interrupt && options.interrupt->load()) {
            result.interrupted = true;
            break;
        }
    }
    progress.finish();
    result.seconds = progress.elapsed_seconds();
    result.tokens = progress.tokens();
    result.tokens_per_second = progress.tokens_per_second();
    if (checkpointed != step || !std::filesystem::exists(state_path)) checkpoint();
    result.last_step = step;
    result.finished = step >= options.steps;
    for (double l : recent) result.final_loss += l / static_cast<double>(recent.size());
    for (auto& p : parameters) {
        p.tensor.mutable_grad().reset();
        p.tensor.requires_grad_(false);
    }
    if (result.interrupted) return result;

    at::NoGradGuard no_grad;
    for (const auto& batch : heldout_batches()) task.evaluate(batch, result.heldout);
    add_unigram_baseline(split.train, heldout, task.vocab_size(), result.heldout);
    return result;
}

}  // namespace cadenza::training
