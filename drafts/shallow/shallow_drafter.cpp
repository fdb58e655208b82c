// draft.shallow: speculative decoding with a shallow draft model built from
// the target's own layers (Lin et al., "Speech Speculative Decoding",
// Interspeech 2025: e.g. the lower 2 and upper 6 of 24 layers, with its own
// embedding, norm and head). The draft is a smaller LLaMA in a Hugging Face
// directory (config.json + model.safetensors); it keeps its own KV cache per
// session and proposes `length` tokens autoregressively.
//
// Each propose:
//  1. Sync the cache with the sequence, as llama.cpp's speculative example
//     does: keep the longest prefix of what the cache holds that still
//     matches the sequence (at most all but the sequence's last token, whose
//     logits are needed), rewind the rest, evaluate what is new as one chain
//     and commit it. After a step whose drafts were all accepted only the
//     target's extra token is new; after a rejection the rejected drafts are
//     dropped.
//  2. Chain (branching = 1): draw token 1 from the distribution after the
//     sequence, evaluate it alone and commit it, draw token 2 from the
//     distribution after it, ..., `length` tokens, `length` - 1 one-token
//     passes; with `stop_probability` the chain ends early after a token
//     the draft itself gave less than that probability. The drafted tokens stay in the cache; the next sync keeps the
//     accepted ones (after a fully accepted step it evaluates the last draft
//     and the target's bonus token).
//     Tree (branching = b > 1): each node of a level gets b children drawn
//     i.i.d. from the distribution after it; level d + 1 needs one pass over
//     the whole tree so far (levels 1..d), left pending and dropped by the
//     next pass, so the cache only ever commits the sequence.
//  Every distribution goes through host->sampling_probabilities with the
//  pipeline's sampling settings and every token through host->sample_index
//  with the instance's random stream (at temperature 0: the argmax). Row i
//  of the probabilities is the distribution node i was drawn from.
//
// Cost, the main lever of this method on a CPU (the draft runs `length`
// passes per step):
//  * every pass is LlamaModel::forward_tree, on the CPU its plain-loop
//    pass (backbones/llama/cpu_tree_pass.h: no LibTorch operator per layer;
//    it replaced this plugin's own one-token path);
//  * the output head (the draft's largest matrix for speech vocabularies:
//    LLaSA's is 193,800 x 2048) is applied only to the last row of a pass
//    and only to the allowed tokens' rows (the audio codes and the end
//    token), into a buffer the session keeps; with weight_precision =
//    "int8" it is the model's int8 panels instead (every token's logit, 2.1
//    MB on en-small against 8.4 MB of float32 rows: the target as its own
//    draft), and kv_precision = "float16" halves what a level's attention
//    reads;
//  * the probabilities block handed to the host is reused across steps;
//  * a draft with a code-digit head (metadata cadenza.output = "code_digits"
//    in its safetensors, tensors digits.weight [R, H] and digits.bias [R];
//    drafts/common/code_digit_head.h) replaces the vocabulary head by R = 93
//    rows for en-small's 8,252 tokens, its distribution the product of the
//    class and digit distributions;
//  * `digit_head` gives a model without one (the target as its own int8
//    draft) such a head from its own file (`cadenza model digit-head`: the
//    factorized form of the model's output table), and `candidates = K`
//    scores the head's K most likely allowed tokens by the model's own
//    output table rows instead of forming the product
//    (drafts/common/table_candidates.h): K rows of the table a level, not
//    the whole table.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "code_digit_head.h"
#include "draft_support.h"
#include "kv_cache.h"
#include "libtorch_boundary.h"
#include "llama_model.h"
#include "row_combinations.h"
#include "safetensors.h"
#include "small_matmul.h"
#include "table_candidates.h"
#include "torch_device.h"
#include "weight_precision.h"

namespace {

using cadenza::sdk::Error;
namespace sdk = cadenza::sdk;
using namespace cadenza::llama;
namespace drafts = cadenza::drafts;

constexpr const char* plugin_name = "draft.shallow";
constexpr int64_t max_tree_nodes = 512;

const cdz_param_spec params[] = {
    {"model", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the draft model: a Hugging Face directory (config.json + safetensors), or its safetensors file"},
    {"length", CDZ_PARAM_INT, "3", 1, 1, 32, nullptr, "tokens proposed autoregressively per step (the tree's depth)"},
    {"branching", CDZ_PARAM_INT, "1", 1, 1, 8, nullptr,
     "children per node, drawn i.i.d. from the node's distribution; 1 proposes a chain"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "LibTorch intra-op threads (process-wide); 0: keep the process's setting (the backbone's)"},
    {"prefill_threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "threads that split the prompt's pass (64 tokens or more, the same result to the bit); 0: one per core"},
    {"stop_probability", CDZ_PARAM_FLOAT, "0", 1, 0, 1, nullptr,
     "a chain stops growing after a token the draft gave less than this probability (dynamic length); 0: always "
     "`length` tokens"},
    {"weight_precision", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, weight_precision_choices, weight_precision_help},
    {"kv_precision", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, kv_precision_choices, kv_precision_help},
    {"digit_head", CDZ_PARAM_PATH, "\"\"", 0, 0, 0, nullptr,
     "a code-digit head for the model's last hidden state in place of the model's own (safetensors with "
     "digits.weight, digits.bias and the code grid's metadata, as `cadenza model digit-head` writes it); \"\": the "
     "model's own head"},
    {"candidates", CDZ_PARAM_INT, "0", 1, 0, 8192, nullptr,
     "0: a code-digit head's row is its product distribution; K > 0: the head's K most likely allowed tokens scored "
     "by the model's output table (its lm_head rows), the sampling settings over them, zero elsewhere"},
    drafts::digit_sampling_param,
    {"prefix_from_target", CDZ_PARAM_BOOL, "false", 0, 0.0, 0.0, nullptr,
     "start each synthesis's cache from the target's keys and values of the prompt (plugin ABI 1.2, when the "
     "backbone hands them) instead of evaluating the prompt again: for a draft of the target's own layers and "
     "shapes, the target at a lower precision (model = the target's checkpoint)"},
};

struct Drafter {
    std::unique_ptr<LlamaModel> model;
    KvPrecision kv_precision = KvPrecision::float32;
    bool cpu = false;               // the model is on the CPU: the head reads only the allowed rows
    at::Tensor head;                // [V, H] contiguous
    bool panel_head = false;        // weight_precision = "int8": the head from the model's int8 panels, not `head`
    std::optional<drafts::CodeDigitDistribution> digits;  // a code-digit head instead of `head`
    at::Tensor digit_weight, digit_bias;                  // [R, H], [R] on the model's device
    int64_t candidates = 0;                               // > 0: the head's best tokens scored by `head`
    int64_t length = 3;
    int64_t branching = 1;
    double stop_probability = 0.0;
    int64_t max_positions = 0;
    bool prefix_from_target = false;
    cdz_rng* rng = nullptr;

    int64_t max_nodes() const {
        int64_t total = 0, level = 1;
        for (int64_t d = 0; d < length; ++d) total += (level *= branching);
        return total;
    }
};

struct Session {
    Session(const Drafter* d, int64_t capacity)
        : drafter(d), cache(d->model->config(), capacity, d->model->device(), d->kv_precision) {
        evaluated.reserve(static_cast<size_t>(capacity));
        if (d->candidates > 0)
            table_candidates.emplace(d->head.data_ptr<float>(), d->head.size(0), d->head.size(1), d->candidates);
    }

    const Drafter* drafter;
    KvCache cache;
    std::vector<int32_t> evaluated;  // the tokens the cache holds, committed
    // Scratch kept across proposals.
    std::vector<int32_t> pass_tokens, pass_parents;
    std::vector<int64_t> path;
    std::vector<int32_t> tokens, parents;  // the proposal, valid until the next call
    TreePassScratch pass_scratch;
    at::Tensor logits;                     // [rows, V]
    at::Tensor digit_logits;               // [rows, R]: a code-digit head's outputs
    std::vector<float> digit_scratch;      // [R]
    std::vector<float> states;             // [rows, H]: the hidden states the candidates are scored on
    std::optional<drafts::TableCandidates> table_candidates;  // with candidates > 0
    drafts::ProbabilityRows rows;
};

// The code-digit head `file` declares (the draft's safetensors, or the
// `digit_head` file), if any.
void load_code_digit_head(Drafter& d, const std::filesystem::path& file) {
    try {
        const cadenza::safetensors::Checkpoint checkpoint = cadenza::safetensors::Checkpoint::open(file);
        const LlamaConfig& c = d.model->config();
        const std::optional<drafts::CodeGrid> grid = drafts::code_grid_of(checkpoint.metadata(), c.vocab_size, file.string());
        if (!grid) return;
        const int64_t rows = grid->head_rows();
        std::vector<float> weight = checkpoint.read_f32("digits.weight", {rows, c.hidden_size});
        std::vector<float> bias = checkpoint.read_f32("digits.bias", {rows});
        d.digit_weight = at::from_blob(weight.data(), {rows, c.hidden_size}, at::kFloat).clone().to(d.model->device());
        d.digit_bias = at::from_blob(bias.data(), {rows}, at::kFloat).clone().to(d.model->device());
        d.digits.emplace(*grid);
    } catch (const cadenza::safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return sdk::guarded([&] {
        const sdk::Params values(*args);
        auto drafter = std::make_unique<Drafter>();
        const std::filesystem::path model = values.string("model");
        drafter->length = values.integer("length");
        drafter->branching = values.integer("branching");
        drafter->stop_probability = values.number("stop_probability");
        if (drafter->stop_probability > 0 && drafter->branching > 1)
            throw Error(CDZ_STATUS_INVALID_CONFIG, "stop_probability shortens chains; it needs branching = 1");
        if (drafter->max_nodes() > max_tree_nodes)
            throw Error(CDZ_STATUS_INVALID_CONFIG, "length " + std::to_string(drafter->length) + " with branching " +
                                                       std::to_string(drafter->branching) + " makes a tree of " +
                                                       std::to_string(drafter->max_nodes()) + " nodes; at most " +
                                                       std::to_string(max_tree_nodes) + " are allowed");
        drafts::apply_threads(values.integer("threads"));
        const std::filesystem::path config_path =
            (std::filesystem::is_directory(model) ? model : model.parent_path()) / "config.json";
        const at::Device device = cadenza::torch_device(args->device && *args->device ? args->device : "cpu");
        const LlamaConfig config = LlamaConfig::from_file(config_path);
        c10::InferenceMode inference;
        drafter->model = std::make_unique<LlamaModel>(LlamaWeights::load(model, config, device),
                                                      config.max_position_embeddings);
        pack_panels_with_precision(*drafter->model, values.string("weight_precision"), plugin_name);
        drafter->model->set_prefill_threads(static_cast<int>(values.integer("prefill_threads")));
        drafter->max_positions = config.max_position_embeddings;
        const std::string digit_head = values.string("digit_head");
        load_code_digit_head(*drafter, digit_head.empty() ? model : std::filesystem::path(digit_head));
        if (!digit_head.empty() && !drafter->digits)
            throw Error(CDZ_STATUS_INVALID_CONFIG, digit_head + ": parameter 'digit_head': the file declares no "
                                                                "code-digit head (metadata cadenza.output = \"code_digits\")");
        if (drafter->digits)
            drafter->digits->set_sampling(drafts::digit_sampling_of(values));
        drafter->cpu = drafter->model->device().is_cpu();
        drafter->head = drafter->model->weights().lm_head.contiguous();
        drafter->panel_head = values.string("weight_precision") == "int8" && drafter->model->has_panels();
        drafter->candidates = values.integer("candidates");
        if (drafter->candidates > 0 && !drafter->digits)
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        model.string() + ": parameter 'candidates' = " + std::to_string(drafter->candidates) +
                            " picks its tokens with a code-digit head, which this model has not; give one as "
                            "'digit_head' (`cadenza model digit-head`)");
        if (drafter->candidates > 0 && !drafter->cpu)
            throw Error(CDZ_STATUS_INVALID_CONFIG, "parameter 'candidates' scores tokens on the CPU; the draft runs on " +
                                                       drafter->model->device().str());
        drafter->kv_precision = kv_precision_for(*drafter->model, values.string("kv_precision"), plugin_name);
        drafter->prefix_from_target = values.boolean("prefix_from_target");
        drafter->rng = args->rng;
        *out_ctx = drafter.release();
    });
}

void destroy(void* ctx) { delete static_cast<Drafter*>(ctx); }

cdz_status* get_info(void* ctx, cdz_drafter_info* out) {
    return sdk::guarded([&] {
        const auto& d = *static_cast<const Drafter*>(ctx);
        out->max_nodes = static_cast<int32_t>(d.max_nodes());
        out->max_depth = static_cast<int32_t>(d.length);
        out->needs_target_hidden = 0;
        if (CDZ_STRUCT_HAS(out, cdz_drafter_info, reads_target_cache))
            out->reads_target_cache = d.prefix_from_target ? 1 : 0;
    });
}

cdz_status* session_create(void* ctx, int64_t capacity, void** out_session) {
    return sdk::guarded([&] {
        const auto* d = static_cast<const Drafter*>(ctx);
        c10::InferenceMode inference;
        *out_session = new Session(d, capacity);
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

// The output head on one hidden state [H] into row `row` of the session's
// logits [V]: only the rows of `tokens` (the others keep stale values that
// nobody reads). A code-digit head keeps its R logits instead (row `row` of
// the session's digit logits), turned into a distribution by
// row_probabilities.
void head_row(Session& s, const at::Tensor& hidden, const drafts::TokenRange& tokens, int64_t row) {
    const Drafter& d = *s.drafter;
    if (d.digits) {
        if (d.cpu) {  // a 93 x 256 product: LibTorch's call would cost more than the arithmetic
            const int64_t rows = d.digit_weight.size(0), width = d.digit_weight.size(1);
            small_matmul_rows(best_matmul_kernel(), hidden.data_ptr<float>(), 1, width, d.digit_weight.data_ptr<float>(),
                              rows, width, d.digit_bias.data_ptr<float>(), s.digit_logits.data_ptr<float>() + row * rows,
                              rows, /*split=*/false);
        } else {
            s.digit_logits.select(0, row).copy_(at::addmv(d.digit_bias, d.digit_weight, hidden));
        }
        if (d.candidates > 0) {
            const int64_t width = hidden.size(0);
            const float* h = hidden.data_ptr<float>();
            std::copy(h, h + width, s.states.begin() + row * width);
        }
        return;
    }
    at::Tensor out = s.logits.select(0, row);
    if (d.panel_head) {  // every token's logit: the head's int8 panels stream 2.1 MB, float32's rows 8.4 MB
        d.model->panel_logits(hidden.contiguous().data_ptr<float>(), 1, out.data_ptr<float>());
        return;
    }
    if (!d.cpu) {  // the model on another device: the whole head there, the row back here
        out.copy_(at::mv(d.model->weights().lm_head, hidden));
        return;
    }
    const at::Tensor& head = d.head;
    const int64_t width = tokens.end - tokens.begin;
    if (width == head.size(0)) {
        at::mv_out(out, head, hidden);
        return;
    }
    at::Tensor part = out.narrow(0, tokens.begin, width);
    at::mv_out(part, head.narrow(0, tokens.begin, width), hidden);
    if (tokens.extra >= 0) {
        const int64_t size = head.size(1);
        const float* weights = d.head.data_ptr<float>() + tokens.extra * size;
        const float* h = hidden.data_ptr<float>();
        double sum = 0.0;
        for (int64_t j = 0; j < size; ++j) sum += static_cast<double>(weights[j]) * h[j];
        out.data_ptr<float>()[tokens.extra] = static_cast<float>(sum);
    }
}

// The draft distribution of row `row` (head_row's) under the sampling
// settings into `out` [V]: a code-digit head's factor by factor, else the
// host's sampling of the logits.
void row_probabilities(Session& s, int64_t row, const cdz_sampling* sampling, float* out) {
    const Drafter& d = *s.drafter;
    const int64_t vocab = s.logits.size(1);
    float* logits = s.logits.data_ptr<float>() + row * vocab;
    if (d.digits) {
        const float* head = s.digit_logits.data_ptr<float>() + row * s.digit_logits.size(1);
        if (s.table_candidates) {
            const int64_t width = d.model->config().hidden_size;
            s.table_candidates->fill_row(*d.digits, head, s.states.data() + row * width, sampling, out);
            return;
        }
        if (sampling && d.digits->fill_probabilities(head, *sampling, out, s.digit_scratch.data())) return;
        d.digits->fill_log_probabilities(head, logits, s.digit_scratch.data());
    }
    drafts::sampling_probabilities(sampling, logits, out, vocab);
}

// Room for `count` rows of logits in the session.
void reserve_logits(Session& s, int64_t count) {
    const Drafter& d = *s.drafter;
    const int64_t vocab = d.model->config().vocab_size;
    const auto options = at::TensorOptions().dtype(at::kFloat);
    if (!s.logits.defined() || s.logits.size(0) < count)
        s.logits = at::empty({std::max<int64_t>(count, 1), vocab}, options);
    if (d.digits && (!s.digit_logits.defined() || s.digit_logits.size(0) < count)) {
        const int64_t width = d.digits->grid().head_rows();
        s.digit_logits = at::empty({std::max<int64_t>(count, 1), width}, options);
        s.digit_scratch.resize(static_cast<size_t>(width));
    }
    const auto states = static_cast<size_t>(std::max<int64_t>(count, 1) * d.model->config().hidden_size);
    if (d.candidates > 0 && s.states.size() < states) s.states.resize(states);
}

// Evaluates `tokens` as a chain after the committed prefix, commits them and
// leaves the last one's head output in row 0.
void extend(Session& s, const int32_t* tokens, int64_t count, const drafts::TokenRange& range) {
    s.pass_tokens.assign(tokens, tokens + count);
    s.pass_parents.resize(static_cast<size_t>(count));
    std::iota(s.pass_parents.begin(), s.pass_parents.end(), -1);
    const TreeOutput out = s.drafter->model->forward_tree(s.cache, s.pass_tokens, s.pass_parents, LlamaModel::no_logits,
                                                          &s.pass_scratch);
    s.path.resize(static_cast<size_t>(count));
    std::iota(s.path.begin(), s.path.end(), 0);
    s.cache.commit(s.path);
    s.evaluated.insert(s.evaluated.end(), tokens, tokens + count);
    reserve_logits(s, 1);
    head_row(s, out.hidden.select(0, count - 1).contiguous(), range, 0);
}

// The target's keys and values of tokens[0, n) (cdz_draft_input.target_keys)
// as the cache's committed prefix, in the cache's precision: the draft then
// evaluates only what follows. They must have the model's shape.
void start_from_target(Session& s, const cdz_draft_input& in) {
    const LlamaConfig& c = s.drafter->model->config();
    const int64_t n = in.target_keys->ndim == 4 ? in.target_keys->shape[2] : -1;
    auto shaped = [&](const DLTensor& t) {
        return t.ndim == 4 && t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1 &&
               t.device.device_type == kDLCPU && !t.strides && t.shape[0] == c.num_hidden_layers &&
               t.shape[1] == c.num_key_value_heads && t.shape[2] == n && t.shape[3] == c.head_dim;
    };
    if (!shaped(*in.target_keys) || !shaped(*in.target_values))
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    "parameter 'prefix_from_target': the target's cache is not float32 [" +
                        std::to_string(c.num_hidden_layers) + ", " + std::to_string(c.num_key_value_heads) +
                        ", positions, " + std::to_string(c.head_dim) +
                        "] on the CPU, the draft's layers and shapes (is `model` the target's checkpoint?)");
    if (n < 1 || n >= in.token_count)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's cache holds " + std::to_string(n) +
                                                     " positions of a sequence of " + std::to_string(in.token_count));
    auto rows = [&](const DLTensor& t) {
        const auto* data = reinterpret_cast<const float*>(static_cast<const char*>(t.data) + t.byte_offset);
        return at::from_blob(const_cast<float*>(data), {c.num_hidden_layers, c.num_key_value_heads, n, c.head_dim},
                             at::kFloat);
    };
    const at::Tensor keys = rows(*in.target_keys), values = rows(*in.target_values);
    const at::Device device = s.drafter->model->device();
    s.cache.begin_pass(n);  // after the empty prefix: the caller starts from nothing evaluated
    for (int64_t layer = 0; layer < c.num_hidden_layers; ++layer)  // write takes [positions, kv_heads, head_dim]
        s.cache.write(layer, keys[layer].transpose(0, 1).to(device), values[layer].transpose(0, 1).to(device));
    s.path.resize(static_cast<size_t>(n));
    std::iota(s.path.begin(), s.path.end(), 0);
    s.cache.commit(s.path);
    s.evaluated.assign(in.tokens, in.tokens + n);
}

// Draws `count` children of `parent` from head output row `row`, writing their row(s).
void draw_children(Session& s, const cdz_draft_input& in, int64_t row, int32_t parent, int64_t count, float* rows,
                   int64_t vocab) {
    float* first = rows + s.tokens.size() * static_cast<size_t>(vocab);
    row_probabilities(s, row, in.sampling, first);
    for (int64_t c = 0; c < count; ++c) {
        float* row = rows + s.tokens.size() * static_cast<size_t>(vocab);
        if (c > 0) std::copy(first, first + vocab, row);
        s.tokens.push_back(drafts::sample_index(s.drafter->rng, first, vocab));
        s.parents.push_back(parent);
    }
}

cdz_status* propose(void* raw, const cdz_draft_input* in, cdz_draft_output* out) {
    return sdk::guarded([&] {
        auto& s = *static_cast<Session*>(raw);
        const Drafter& d = *s.drafter;
        const int64_t n = in->token_count;
        if (n < 1 || !in->tokens) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "no tokens to continue");
        c10::InferenceMode inference;
        s.tokens.clear();
        s.parents.clear();

        // How deep the proposal may go: every evaluated position must fit the
        // cache and the rotary table.
        const int64_t limit = std::min(s.cache.capacity(), d.max_positions);
        const int64_t depth = std::min(d.length, limit - n + 1);
        if (depth <= 0) {
            drafts::set_empty(out);
            return;
        }

        // 1. Sync: keep the matching prefix, evaluate the rest (at least the last token).
        if (d.prefix_from_target && s.evaluated.empty() && CDZ_STRUCT_HAS(in, cdz_draft_input, target_values) &&
            in->target_keys && in->target_values)
            start_from_target(s, *in);
        const auto limit_keep = static_cast<size_t>(n - 1);
        size_t keep = 0;
        while (keep < limit_keep && keep < s.evaluated.size() && s.evaluated[keep] == in->tokens[keep]) ++keep;
        if (keep < s.evaluated.size()) {
            s.cache.rewind(static_cast<int64_t>(keep));
            s.evaluated.resize(keep);
        }
        const int64_t vocab = d.model->config().vocab_size;
        const drafts::TokenRange range = drafts::allowed_tokens(in->sampling, vocab);
        const int64_t fresh = n - static_cast<int64_t>(keep);
        extend(s, in->tokens + keep, fresh, range);

        int64_t nodes = 0, level = 1;
        for (int64_t k = 0; k < depth; ++k) nodes += (level *= d.branching);
        float* rows = s.rows.prepare(nodes, vocab);

        if (d.branching == 1) {
            // 2a. A chain: each drafted token is evaluated and committed.
            for (int64_t k = 0; k < depth; ++k) {
                draw_children(s, *in, 0, static_cast<int32_t>(k) - 1, 1, rows, vocab);
                // The draft's own probability of its token: below the
                // threshold a next token would rarely be accepted.
                const float drafted = rows[static_cast<size_t>(k) * vocab + static_cast<size_t>(s.tokens.back())];
                if (drafted < d.stop_probability) break;
                if (k + 1 < depth) extend(s, &s.tokens.back(), 1, range);
            }
        } else {
            // 2b. A tree, level by level; each pass re-evaluates the tree so far, pending.
            draw_children(s, *in, 0, -1, d.branching, rows, vocab);
            size_t level_begin = 0;
            for (int64_t k = 1; k < depth; ++k) {
                const size_t level_end = s.tokens.size();
                const TreeOutput pass =
                    d.model->forward_tree(s.cache, s.tokens, s.parents, LlamaModel::no_logits, &s.pass_scratch);
                const auto frontier = static_cast<int64_t>(level_end - level_begin);
                reserve_logits(s, frontier);
                for (int64_t f = 0; f < frontier; ++f)
                    head_row(s, pass.hidden.select(0, static_cast<int64_t>(level_begin) + f).contiguous(), range, f);
                for (size_t node = level_begin; node < level_end; ++node)
                    draw_children(s, *in, static_cast<int64_t>(node - level_begin), static_cast<int32_t>(node),
                                  d.branching, rows, vocab);
                level_begin = level_end;
            }
        }
        drafts::set_tree(out, s.tokens, s.parents);
        out->probabilities = s.rows.lend(static_cast<int64_t>(s.tokens.size()));
    });
}

const cdz_drafter_vtable vtable = {
    sizeof(cdz_drafter_vtable), create, destroy, get_info, session_create, session_destroy, propose,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0",
    "a shallow LLaMA draft built from the target's layers (SSD), with its own KV cache, proposing a chain or tree",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return cadenza::sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, cadenza::torch_support::describe_exception);
}
