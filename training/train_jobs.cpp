#include "train_jobs.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>

#include "code_digit_embedding.h"
#include "code_digit_output.h"
#include "draft_heads.h"
#include "error.h"
#include "language_model_task.h"
#include "layer_growth.h"
#include "model_directory.h"
#include "progress.h"
#include "random_bits.h"
#include "recurrent_draft_task.h"
#include "safetensors.h"
#include "shallow_draft.h"
#include "thread_policy.h"
#include "trainer.h"

namespace cadenza::training {
namespace {

std::string grouped(int64_t value) {
    std::string digits = std::to_string(value), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

void describe_corpus(const TokenCorpus& corpus, std::ostream& out) {
    out << "corpus: " << corpus.name << ": " << grouped(static_cast<int64_t>(corpus.sequences.size())) << " sequences, "
        << grouped(corpus.token_count()) << " tokens (" << grouped(corpus.target_token_count()) << " in targets)\n";
}

void describe_model(const std::string& what, const llama::LlamaConfig& c, std::ostream& out) {
    out << what << ": " << c.num_hidden_layers << " layers, hidden " << c.hidden_size << ", intermediate "
        << c.intermediate_size << ", heads " << c.num_attention_heads << "/" << c.num_key_value_heads << ", vocab "
        << c.vocab_size << ", " << grouped(c.parameter_count()) << " parameters\n";
}

void report(const TrainResult& result, const TrainOptions& options, const std::string& written, std::ostream& out) {
    char text[256];
    std::snprintf(text, sizeof(text), "trained steps %lld..%lld of %lld in %s (%s, %s tokens), final training loss %.4f",
                  static_cast<long long>(result.first_step), static_cast<long long>(result.last_step),
                  static_cast<long long>(options.steps), format_duration(result.seconds).c_str(),
                  format_rate(result.tokens_per_second).c_str(), grouped(result.tokens).c_str(), result.final_loss);
    out << text << '\n';
    if (result.interrupted || !result.finished)
        out << (result.interrupted ? "interrupted" : "stopped") << " at step " << result.last_step << " of "
            << options.steps << "; continue with --resume\n";
    if (!result.interrupted) {
        out << "held-out (" << result.heldout_sequences << " sequences";
        if (result.heldout.contains("unigram baseline accuracy"))
            out << ", " << grouped(static_cast<int64_t>(result.heldout.at("unigram baseline accuracy").count))
                << " labelled tokens";
        out << "):\n";
        for (const auto& entry : result.heldout.entries()) out << "  " << Metrics::format(entry) << '\n';
        if (result.heldout_sequences == 0) out << "  (no held-out sequences: --holdout is 0)\n";
    }
    out << "wrote " << written << '\n';
}

llama::LlamaWeights load_target(const std::filesystem::path& target, const TokenCorpus& corpus, std::ostream& out) {
    llama::LlamaWeights weights = load_model_directory(target);
    corpus.check_vocabulary(weights.config.vocab_size, target.string());
    describe_model("target " + target.string(), weights.config, out);
    return weights;
}

std::filesystem::path absolute_path(const std::filesystem::path& path) {
    return std::filesystem::absolute(path).lexically_normal();
}

SpeechTokenLayout read_layout(const std::filesystem::path& path, const llama::LlamaConfig& config) {
    std::ifstream in(path);
    if (!in) throw Error(CDZ_STATUS_NOT_FOUND, path.string() + ": cannot read the layout");
    std::stringstream text;
    text << in.rdbuf();
    const SpeechTokenLayout layout = SpeechTokenLayout::from_json(text.str(), path.string());
    if (layout.vocab_size() != config.vocab_size)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + ": a vocabulary of " +
                                                     std::to_string(layout.vocab_size()) + " tokens, the model has " +
                                                     std::to_string(config.vocab_size));
    return layout;
}

GuidedAttention guided_attention_of(const LanguageModelJob& job, const llama::LlamaConfig& config) {
    if (job.layout.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--guided-attention needs --layout (the corpus's layout.json)");
    GuidedAttention guide;
    guide.layers = parse_index_list(job.guided_layers, "--guided-attention");
    for (const int64_t layer : guide.layers)
        if (layer >= config.num_hidden_layers)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--guided-attention: layer " + std::to_string(layer) +
                                                         " is outside the model's " +
                                                         std::to_string(config.num_hidden_layers) + " layers");
    std::sort(guide.layers.begin(), guide.layers.end());
    guide.layers.erase(std::unique(guide.layers.begin(), guide.layers.end()), guide.layers.end());
    if (job.guided_head < 0 || job.guided_head >= config.num_attention_heads)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--guided-head " + std::to_string(job.guided_head) +
                                                     " is outside the model's " +
                                                     std::to_string(config.num_attention_heads) + " heads");
    guide.head = job.guided_head;
    guide.weight = job.guided_weight;
    guide.width = job.guided_width;
    guide.layout = read_layout(job.layout, config);
    return guide;
}

// The grid of code-digit output heads from --code-digits and --layout; none
// when --code-digits is empty.
std::optional<drafts::CodeGrid> code_grid_for(const std::string& code_digits, const std::filesystem::path& layout_path,
                                              const llama::LlamaConfig& config) {
    if (code_digits.empty()) return std::nullopt;
    if (layout_path.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--code-digits needs --layout (the corpus's layout.json)");
    const SpeechTokenLayout layout = read_layout(layout_path, config);
    drafts::CodeGrid grid =
        drafts::CodeGrid::parse(code_digits, layout.audio_token_offset, config.vocab_size, "--code-digits");
    if (grid.code_count() != layout.audio_token_count)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--code-digits " + code_digits + " make " +
                                                     std::to_string(grid.code_count()) + " codes, " +
                                                     layout_path.string() + " has " +
                                                     std::to_string(layout.audio_token_count));
    return grid;
}

void describe_output(const drafts::CodeGrid* grid, const char* per, std::ostream& out) {
    if (grid)
        out << "output: code digits " << grid->levels_text() << " from token " << grid->code_offset << " ("
            << grid->head_rows() << " logits" << per << " instead of " << grid->vocab_size << ")\n";
    else
        out << "output: the target's vocabulary head\n";
}

SpeechTokenLayout layout_for(const LanguageModelJob& job, const llama::LlamaConfig& config, const char* option) {
    if (job.layout.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, std::string(option) + " needs --layout (the corpus's layout.json)");
    return read_layout(job.layout, config);
}

FedCodeReplacement fed_code_replacement(double rate, const SpeechTokenLayout& layout, const LanguageModelJob& job,
                                        uint64_t stream) {
    FedCodeReplacement replacement;
    replacement.rate = rate;
    replacement.code_offset = layout.audio_token_offset;
    replacement.code_count = layout.audio_token_count;
    replacement.seed = derive_seed(job.options.seed, stream);
    return replacement;
}

}  // namespace

TrainResult run_language_model_job(const LanguageModelJob& job, std::ostream& out, std::ostream& log) {
    const int threads = llama::apply_thread_policy(static_cast<int>(job.options.threads));
    const TokenCorpus corpus = load_token_corpus(job.corpus);
    if (job.init_from.empty() == job.config.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "train lm needs either --config (random weights) or --init-from (a model directory)");
    std::optional<llama::LlamaWeights> initial;
    if (!job.init_from.empty()) initial = load_model_directory(job.init_from);
    if (job.add_layers != 0) {
        if (!initial) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--add-layers needs --init-from (a trained model to deepen)");
        const int64_t trained_layers = initial->config.num_hidden_layers;
        initial = with_added_layers(std::move(*initial), job.add_layers, derive_seed(job.options.seed, 0x6c61796572ull));
        out << "added layers: " << trained_layers << " trained + " << job.add_layers
            << " new on top (their output projections at zero: the model starts as the trained one)\n";
    }
    const llama::LlamaConfig config = initial ? initial->config : llama::LlamaConfig::from_file(job.config);
    corpus.check_vocabulary(config.vocab_size, (initial ? job.init_from / "config.json" : job.config).string());
    describe_corpus(corpus, out);
    describe_model("target", config, out);
    if (initial) out << "initial weights: " << job.init_from.string() << '\n';
    out << "threads: " << threads << '\n' << std::flush;
    LanguageModelTask task = initial ? LanguageModelTask(std::move(*initial), config.max_position_embeddings) : LanguageModelTask(config, job.options.seed);
    if (!job.guided_layers.empty()) {
        GuidedAttention guide = guided_attention_of(job, config);
        out << "guided attention: head " << guide.head << " of layers " << format_index_list(guide.layers)
            << ", weight " << guide.weight << ", width " << guide.width << '\n' << std::flush;
        task.set_guided_attention(std::move(guide));
    }
    if (!job.code_digits.empty()) {
        const SpeechTokenLayout layout = layout_for(job, config, "--code-digits");
        CodeDigitEmbedding digits(parse_index_list(job.code_digits, "--code-digits"), layout.audio_token_offset,
                                  layout.audio_token_count, config.hidden_size, at::TensorOptions(at::kFloat));
        out << "code embeddings: digits of the FSQ grid " << digits.describe() << '\n' << std::flush;
        task.set_code_digits(std::move(digits));
    }
    if (job.code_input_noise > 0) {
        const SpeechTokenLayout layout = layout_for(job, config, "--code-input-noise");
        // "noise": a stream apart from the batches'
        const CodeInputNoise noise = fed_code_replacement(job.code_input_noise, layout, job, 0x6e6f697365ull);
        out << "code input noise: " << noise.rate * 100 << "% of the fed target codes replaced by random codes\n"
            << std::flush;
        task.set_code_input_noise(noise);
    }
    if (job.text_dropout > 0) {
        const SpeechTokenLayout layout = layout_for(job, config, "--text-dropout");
        TextDropout dropout;
        dropout.rate = job.text_dropout;
        dropout.text_offset = layout.text_token_offset;
        dropout.text_count = layout.text_token_count;
        dropout.seed = derive_seed(job.options.seed, 0x74657874ull);  // "text"
        // Layouts older than text_pad_id: 0 is the <pad> of every vocabulary
        // cadenza ships (models/frontend/*.vocab).
        dropout.pad_id = layout.text_pad_id >= 0 ? layout.text_pad_id : 0;
        out << "text dropout: " << dropout.rate * 100 << "% of the training texts replaced by the null text (<pad>: "
            << "text id " << dropout.pad_id
            << (layout.text_pad_id >= 0 ? "" : ", as the layout records no text_pad_id") << ")\n"
            << std::flush;
        task.set_text_dropout(dropout);
    }
    if (job.self_feeding > 0) {
        const SpeechTokenLayout layout = layout_for(job, config, "--self-feeding");
        const SelfFeeding feeding = fed_code_replacement(job.self_feeding, layout, job, 0x73656c66ull);  // "self"
        out << "self-feeding: " << feeding.rate * 100
            << "% of the fed target codes replaced by the model's own samples\n" << std::flush;
        task.set_self_feeding(feeding);
    }
    if (!job.mtp_heads.empty()) {
        task.set_mtp_heads(DraftHeads::load(job.mtp_heads), job.mtp_weight);
        const DraftHeads& heads = task.mtp_heads();
        out << "mtp heads: " << heads.count() << " from " << job.mtp_heads.string() << " (output "
            << heads.output_description() << "), trained with the model: loss = next token's cross-entropy + "
            << (job.mtp_weight == 1.0 ? std::string() : std::to_string(job.mtp_weight) + " * ")
            << "each head's on token t+2+i (the MTP paper's Eq. 3"
            << (job.mtp_weight == 1.0 ? ")" : ", its heads' part scaled)") << "\n" << std::flush;
    }
    const TrainResult result = train(task, corpus, job.options, job.output, log);
    report(result, job.options,
           (job.output / "config.json").string() + ", " + (job.output / "model.safetensors").string() +
               (job.mtp_heads.empty() ? std::string() : ", " + LanguageModelTask::mtp_heads_file(job.output).string()) +
               " and " + task.state_path(job.output).string(),
           out);
    return result;
}

TrainResult run_shallow_draft_job(const ShallowDraftJob& job, std::ostream& out, std::ostream& log) {
    const int threads = llama::apply_thread_policy(static_cast<int>(job.options.threads));
    ShallowDraftLayout layout;
    layout.layers = parse_index_list(job.layers, "--layers");
    // "none": no layer and not the final norm either, the head alone on the
    // copied layers' own last hidden state (with every target layer: a head
    // for the target itself, draft.shallow's `digit_head`).
    if (job.train_layers != "none") layout.train_layers = parse_index_list(job.train_layers, "--train-layers");
    const TokenCorpus corpus = load_token_corpus(job.corpus);
    describe_corpus(corpus, out);
    llama::LlamaWeights target = load_target(job.target, corpus, out);
    const double weight = job.distill ? job.distill_weight : 0.0;
    const std::optional<drafts::CodeGrid> grid = code_grid_for(job.code_digits, job.layout, target.config);
    describe_output(grid ? &*grid : nullptr, "", out);
    ShallowDraftTask task(std::move(target), layout, absolute_path(job.target), weight, grid ? &*grid : nullptr);
    if (!job.init_from.empty()) {
        task.initialize_from(job.init_from);
        out << "initial weights: " << job.init_from.string() << '\n';
    }
    describe_model("draft (target layers " + format_index_list(layout.layers) +
                       (layout.train_layers.empty() ? std::string(", training the head alone)")
                                                    : ", training draft layers " + format_index_list(layout.train_layers) +
                                                          ", the final norm and the head)"),
                   task.draft().config(), out);
    char loss_text[128];
    std::snprintf(loss_text, sizeof(loss_text), "%g * cross-entropy + %g * KL(target || draft)", 1 - weight, weight);
    out << "loss: " << (weight > 0 ? std::string(loss_text) : std::string("cross-entropy (no distillation, as SSD's Eq. 7)"))
        << "\nthreads: " << threads << '\n'
        << std::flush;
    const TrainResult result = train(task, corpus, job.options, job.output, log);
    report(result, job.options,
           (job.output / "config.json").string() + ", " + (job.output / "model.safetensors").string() + " and " +
               task.state_path(job.output).string(),
           out);
    return result;
}

TrainResult run_draft_heads_job(const DraftHeadsJob& job, std::ostream& out, std::ostream& log) {
    const int threads = llama::apply_thread_policy(static_cast<int>(job.options.threads));
    const TokenCorpus corpus = load_token_corpus(job.corpus);
    describe_corpus(corpus, out);
    llama::LlamaWeights target = load_target(job.target, corpus, out);
    const std::optional<drafts::CodeGrid> grid = code_grid_for(job.code_digits, job.layout, target.config);
    DraftHeadsTask task(std::move(target), job.kind, job.heads, absolute_path(job.target), grid ? &*grid : nullptr,
                        job.distill_weight);
    describe_output(grid ? &*grid : nullptr, " per head", out);
    if (!job.init_from.empty()) {
        task.initialize_from(job.init_from);
        out << "initial weights: " << job.init_from.string() << '\n';
    }
    out << "loss: " << (job.distill_weight > 0 ? std::to_string(1 - job.distill_weight) + " * cross-entropy on the corpus + " +
                                                     std::to_string(job.distill_weight) + " * cross-entropy against the target's distribution"
                                               : std::string("cross-entropy on the corpus"))
        << '\n';
    out << job.kind << " heads: " << job.heads << " (head i predicts token t+2+i), loss weights";
    for (int64_t i = 0; i < job.heads; ++i) {
        char w[32];
        std::snprintf(w, sizeof(w), " %.4g", head_loss_weight(job.kind, i));
        out << w;
    }
    out << "; target frozen\nthreads: " << threads << '\n' << std::flush;
    const TrainResult result = train(task, corpus, job.options, job.output, log);
    report(result, job.options, job.output.string() + " and " + task.state_path(job.output).string(), out);
    return result;
}

TrainResult run_recurrent_draft_job(const RecurrentDraftJob& job, std::ostream& out, std::ostream& log) {
    const int threads = llama::apply_thread_policy(static_cast<int>(job.options.threads));
    if (job.code_digits.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "train recurrent needs --code-digits and --layout: its output is a code-digit head");
    const TokenCorpus corpus = load_token_corpus(job.corpus);
    describe_corpus(corpus, out);
    llama::LlamaWeights target = load_target(job.target, corpus, out);
    const drafts::CodeGrid grid = *code_grid_for(job.code_digits, job.layout, target.config);
    describe_output(&grid, " per step", out);
    const SamplingSettings sampling{job.sampling_temperature, job.sampling_top_p};
    const DistillDivergence divergence = job.distill_loss == "total-variation"         ? DistillDivergence::total_variation
                                         : job.distill_loss == "group-total-variation" ? DistillDivergence::group_total_variation
                                                                                       : DistillDivergence::cross_entropy;
    if (divergence == DistillDivergence::group_total_variation && job.groups.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--distill-loss group-total-variation needs --groups (acceptor.pcg's groups file)");
    RecurrentDraftTask task(std::move(target), job.cell_size, job.depth, grid, absolute_path(job.target),
                            job.distill_weight, sampling, job.options.seed, divergence);
    if (!job.groups.empty()) {
        task.set_groups(job.groups);
        out << "groups: " << job.groups.string() << " (held out: each step's group acceptance under acceptor.pcg)\n";
    }
    if (!job.init_from.empty()) {
        task.initialize_from(job.init_from);
        out << "initial weights: " << job.init_from.string() << '\n';
    }
    if (job.table_scoring) {
        task.score_with_target_table();
        out << "table scoring: each step's loss repeated for softmax(target output table x state), which scores "
               "draft.recurrent's candidates\n";
    }
    char loss_text[160];
    std::snprintf(loss_text, sizeof(loss_text),
                  "per step k, weight 0.8^(k-1): %g * cross-entropy on the corpus + %g * %s against the "
                  "target's distribution",
                  1 - job.distill_weight, job.distill_weight, job.distill_loss.c_str());
    out << "recurrent draft: " << task.draft().description() << " (step k reads token t+k, predicts t+k+1)\n"
        << "loss: " << loss_text << "; target frozen\n"
        << "sampling: " << describe(sampling)
        << (sampling.is_plain() ? "" : " (the teacher and the held-out target's distribution; the draft's logits divided by the temperature)")
        << "\nthreads: " << threads << '\n'
        << std::flush;
    const TrainResult result = train(task, corpus, job.options, job.output, log);
    report(result, job.options, job.output.string() + " and " + task.state_path(job.output).string(), out);
    return result;
}

namespace {

// The head of a `train draft --train-layers none` run over every layer of
// `target`, as (weight, bias, grid); throws naming the file and why when the
// draft is anything else.
CodeDigitOutput trained_digit_head(const std::filesystem::path& draft, const llama::LlamaWeights& target,
                                   drafts::CodeGrid& grid) {
    const std::filesystem::path file = draft / "model.safetensors";
    try {
        const safetensors::File weights(file);
        const auto& metadata = weights.metadata();
        const auto value = [&](const std::string& key) {
            const auto found = metadata.find(key);
            return found == metadata.end() ? std::string() : found->second;
        };
        std::vector<int64_t> every_layer(static_cast<size_t>(target.config.num_hidden_layers));
        std::iota(every_layer.begin(), every_layer.end(), 0);
        if (value("cadenza.kind") != "shallow_draft" || !value("cadenza.train_layers").empty() ||
            value("cadenza.draft_layers") != format_index_list(every_layer))
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        file.string() + ": not a head trained on the target's own hidden state (`train draft --layers " +
                            format_index_list(every_layer) + " --train-layers none`): cadenza.draft_layers '" +
                            value("cadenza.draft_layers") + "', cadenza.train_layers '" +
                            value("cadenza.train_layers") + "'");
        const std::optional<drafts::CodeGrid> declared =
            drafts::code_grid_of(metadata, target.config.vocab_size, file.string());
        if (!declared) throw Error(CDZ_STATUS_INVALID_ARGUMENT, file.string() + ": the draft has no code-digit head");
        grid = *declared;
        const int64_t rows = grid.head_rows(), hidden = target.config.hidden_size;
        std::vector<float> weight = weights.read_f32("digits.weight", {rows, hidden});
        std::vector<float> bias = weights.read_f32("digits.bias", {rows});
        return {at::from_blob(weight.data(), {rows, hidden}, at::kFloat).clone(),
                at::from_blob(bias.data(), {rows}, at::kFloat).clone()};
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, e.what());
    }
}

}  // namespace

void run_digit_head_job(const DigitHeadJob& job, std::ostream& out) {
    const bool trained = !job.trained_draft.empty();
    if (!trained && job.code_digits.empty())
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "model digit-head needs --code-digits and --layout, or --from");
    if (!job.force && std::filesystem::exists(job.output))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, job.output.string() + " exists (--force overwrites it)");
    const llama::LlamaWeights target = load_model_directory(job.target);
    describe_model("target " + job.target.string(), target.config, out);
    drafts::CodeGrid grid;
    CodeDigitOutput head;
    if (trained) {
        head = trained_digit_head(job.trained_draft, target, grid);
    } else {
        grid = *code_grid_for(job.code_digits, job.layout, target.config);
        head = CodeDigitOutput::from_table(target.lm_head, grid);
    }
    describe_output(&grid, " per row", out);
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("cadenza.kind", "digit_head");
    writer.set_metadata("cadenza.target", absolute_path(job.target).string());
    writer.set_metadata("cadenza.digit_head",
                        trained ? "trained: " + absolute_path(job.trained_draft).string() : "factorized output table");
    writer.set_metadata("cadenza.hidden_size", std::to_string(target.config.hidden_size));
    writer.set_metadata("cadenza.vocab_size", std::to_string(grid.vocab_size));
    for (const auto& [key, value] : drafts::code_grid_metadata(grid)) writer.set_metadata(key, value);
    const at::Tensor weight = head.weight.contiguous(), bias = head.bias.contiguous();
    writer.add_f32("digits.weight", {weight.size(0), weight.size(1)}, weight.data_ptr<float>());
    writer.add_f32("digits.bias", {bias.size(0)}, bias.data_ptr<float>());
    try {
        if (job.output.has_parent_path()) std::filesystem::create_directories(job.output.parent_path());
        writer.write(job.output);
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_IO_ERROR, e.what());
    } catch (const std::filesystem::filesystem_error& e) {
        throw Error(CDZ_STATUS_IO_ERROR, job.output.string() + ": " + e.what());
    }
    out << "wrote " << job.output.string() << ": "
        << (trained ? "the head trained in " + job.trained_draft.string() : std::string("the factorized form of the target's output table"))
        << ", " << grid.head_rows() << " x " << target.config.hidden_size << '\n';
}

}  // namespace cadenza::training
