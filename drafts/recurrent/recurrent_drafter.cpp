// draft.recurrent: a recurrent draft on the target's last hidden state
// (drafts/common/recurrent_draft.h, after ReDrafter, Cheng et al. 2024),
// proposing a chain. Where MTP and MEDUSA heads guess the token after next
// without knowing which token the target has just drawn, the cell reads that
// token first, then each token it drafts.
//
// Alignment: the host verifies the drafts (target_hidden_position = N - 2
// for a sequence of N tokens): h is the target's state that predicted
// x_{N-1}, the pending token the target drew. The cell starts at s = h,
// reads x_{N-1} and drafts x_N from q_1, reads x_N and drafts x_{N+1} from
// q_2, ... `length` nodes, node i's row q_{i+1} (the code-digit head's
// product distribution through the sampling settings, as draft.mtp's code
// digits: drafts/common/code_digit_head.h). Node i is drawn with
// host->sample_index from the instance's random stream, in order; with
// stop_probability the chain ends after the first token its row gave less
// than that probability. With draw = "argmax" node i is instead its row's
// most likely token and its row is sent one-hot (the distribution it was
// drawn from: acceptor.exact stays exact; acceptor.tolerance judges the
// token by the target alone, as VADUSA's top candidates); the token comes
// from the head's factors without the row being written whenever they tell
// it exactly (CodeDigitDistribution::most_likely). An acceptor that
// does not verify (Viterbi) has no
// pending token to read: refused. With no hidden state yet (a one-token
// prompt) the proposal is empty.
// With candidates = K (a draft trained with --table-scoring) each row is
// instead the head's K most likely allowed tokens scored by the target's
// output table, through the sampling settings, zero elsewhere
// (drafts/common/table_candidates.h); digit_sampling does not apply.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "draft_support.h"
#include "hidden_state_heads.h"
#include "libtorch_boundary.h"
#include "recurrent_draft.h"
#include "table_candidates.h"

namespace {

using cadenza::sdk::Error;
namespace sdk = cadenza::sdk;
namespace drafts = cadenza::drafts;

constexpr const char* plugin_name = "draft.recurrent";
constexpr const char* draw_choices[] = {"sample", "argmax", nullptr};
constexpr const char* precision_choices[] = {"float32", "float16", nullptr};

const cdz_param_spec params[] = {
    {"model", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the recurrent draft (safetensors from `cadenza train recurrent`: cell.*, digits.*, metadata cadenza.kind = "
     "recurrent)"},
    {"target", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the target checkpoint, for its input embedding: a safetensors file, an index .json, or a directory"},
    {"length", CDZ_PARAM_INT, "0", 1, 0, 64, nullptr, "tokens drafted per step; 0: the depth the draft was trained to"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "LibTorch intra-op threads (process-wide); 0: keep the process's setting (the backbone's)"},
    {"stop_probability", CDZ_PARAM_FLOAT, "0", 1, 0, 1, nullptr,
     "the chain ends after a token the draft gave less than this probability (dynamic length); 0: always `length`"},
    drafts::digit_sampling_param,
    {"cell_precision", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, precision_choices,
     "how the cell's matrices are held: float32 as trained, or float16 (each weight rounded to the nearest half): "
     "half the bytes, so a proposal's steps after the first read them from L2 instead of L3"},
    {"candidates", CDZ_PARAM_INT, "0", 1, 0, 8192, nullptr,
     "0: each row is the code-digit head's product distribution; K > 0: the head's K most likely tokens scored by the "
     "target's output table (a draft trained with `cadenza train recurrent --table-scoring`), zero elsewhere"},
    {"draw", CDZ_PARAM_STRING, "\"sample\"", 0, 0, 0, draw_choices,
     "sample: each token drawn from its row (the row is sent); argmax: each token its row's most likely, sent with a "
     "one-hot row (what it was drawn from), for acceptors that judge a token by the target alone (tolerance)"},
};

struct Drafter {
    drafts::RecurrentDraft draft;
    std::shared_ptr<drafts::CodeDigitDistribution> digits;  // the draft's grid with this instance's digit_sampling
    at::Tensor embedding;  // the target's input embedding [V, H]
    at::Tensor output_table;  // the target's output table [V, H] with candidates, else undefined
    int64_t candidates = 0;
    cdz_rng* rng = nullptr;
    int64_t length = 0;
    double stop_probability = 0.0;
    bool argmax = false;
};

struct Session {
    const Drafter* drafter;
    std::vector<int32_t> tokens, parents;
    drafts::ProbabilityRows rows;
    std::vector<float> log_row, scratch;
    // The cell's rows (RecurrentDraft::advance_row): state [H], its scratch, head logits [R].
    std::vector<float> state, cell_scratch, head_logits;
    std::optional<drafts::TableCandidates> table_candidates;  // with candidates > 0
};

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return sdk::guarded([&] {
        const sdk::Params values(*args);
        auto drafter = std::make_unique<Drafter>();
        drafts::apply_threads(values.integer("threads"));
        c10::InferenceMode inference;
        drafter->embedding = drafts::load_target_embedding(values.string("target"));
        drafter->draft = drafts::RecurrentDraft::load(values.string("model"), drafter->embedding.size(0));
        if (drafter->draft.hidden_size() != drafter->embedding.size(1))
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        values.string("model") + ": hidden size " + std::to_string(drafter->draft.hidden_size()) +
                            " differs from the target's embedding width " + std::to_string(drafter->embedding.size(1)));
        if (values.string("cell_precision") == "float16") drafter->draft.hold_cell_as_half();
        drafter->digits = std::make_shared<drafts::CodeDigitDistribution>(drafter->draft.digits->grid());
        drafter->digits->set_sampling(drafts::digit_sampling_of(values));
        drafter->rng = args->rng;
        drafter->length = values.integer("length") > 0 ? values.integer("length") : drafter->draft.depth;
        drafter->stop_probability = values.number("stop_probability");
        drafter->argmax = values.string("draw") == "argmax";
        drafter->candidates = values.integer("candidates");
        if (drafter->candidates > 0) {
            if (!drafter->draft.table_scored)
                throw Error(CDZ_STATUS_INVALID_CONFIG,
                            values.string("model") + ": candidates = " + std::to_string(drafter->candidates) +
                                " needs a draft trained to be scored by the target's output table (`cadenza train "
                                "recurrent --table-scoring`: metadata cadenza.candidate_scoring); this one was not");
            drafter->output_table = drafts::target_head_is_tied(values.string("target"))
                                        ? drafter->embedding
                                        : drafts::load_target_head(values.string("target")).contiguous();
            if (drafter->output_table.sizes() != drafter->embedding.sizes())
                throw Error(CDZ_STATUS_INVALID_CONFIG, values.string("target") +
                                                           ": the output table's shape differs from the input embedding's");
        }
        *out_ctx = drafter.release();
    });
}

void destroy(void* ctx) { delete static_cast<Drafter*>(ctx); }

cdz_status* get_info(void* ctx, cdz_drafter_info* out) {
    return sdk::guarded([&] {
        const auto& d = *static_cast<const Drafter*>(ctx);
        out->max_nodes = static_cast<int32_t>(d.length);
        out->max_depth = static_cast<int32_t>(d.length);
        out->needs_target_hidden = 1;
    });
}

cdz_status* session_create(void* ctx, int64_t, void** out_session) {
    return sdk::guarded([&] {
        const auto* d = static_cast<const Drafter*>(ctx);
        auto session = std::make_unique<Session>();
        session->drafter = d;
        session->log_row.resize(static_cast<size_t>(d->embedding.size(0)));
        session->scratch.resize(static_cast<size_t>(d->digits->grid().head_rows()));
        session->state.resize(static_cast<size_t>(d->draft.hidden_size()));
        session->cell_scratch.resize(static_cast<size_t>(d->draft.row_scratch_size()));
        session->head_logits.resize(session->scratch.size());
        if (d->candidates > 0)
            session->table_candidates.emplace(d->output_table.data_ptr<float>(), d->output_table.size(0),
                                              d->output_table.size(1), d->candidates);
        *out_session = session.release();
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

// Row `out` [V]: the draft's distribution from the code-digit head's logits
// (and, with candidates, the state) under the sampling settings.
void fill_row(Session& s, const float* head_logits, const cdz_sampling* sampling, float* out) {
    const drafts::CodeDigitDistribution& digits = *s.drafter->digits;
    if (s.table_candidates) {
        s.table_candidates->fill_row(digits, head_logits, s.state.data(), sampling, out);
        return;
    }
    if (sampling && digits.fill_probabilities(head_logits, *sampling, out, s.scratch.data())) return;
    digits.fill_log_probabilities(head_logits, s.log_row.data(), s.scratch.data());
    drafts::sampling_probabilities(sampling, s.log_row.data(), out, static_cast<int64_t>(s.log_row.size()));
}

// The most likely token of fill_row's row (the first on a tie) and its
// probability; from the candidates' scores, or the factors alone when the
// head can tell it exactly, else from the row, written into `row` [V] as
// scratch.
int32_t most_likely(Session& s, const float* head_logits, const cdz_sampling* sampling, float* row,
                    float* probability) {
    if (s.table_candidates)
        return s.table_candidates->most_likely(*s.drafter->digits, head_logits, s.state.data(), sampling, probability);
    int64_t token = 0;
    if (sampling && s.drafter->digits->most_likely(head_logits, *sampling, s.scratch.data(), &token, probability))
        return static_cast<int32_t>(token);
    const int64_t vocab = static_cast<int64_t>(s.log_row.size());
    fill_row(s, head_logits, sampling, row);
    const auto best = static_cast<int32_t>(std::max_element(row, row + vocab) - row);
    *probability = row[best];
    return best;
}

cdz_status* propose(void* raw, const cdz_draft_input* in, cdz_draft_output* out) {
    return sdk::guarded([&] {
        auto& s = *static_cast<Session*>(raw);
        const Drafter& d = *s.drafter;
        const int64_t hidden_size = d.draft.hidden_size();
        const float* h = drafts::target_hidden(*in, hidden_size);
        if (!h) {
            drafts::set_empty(out);
            return;
        }
        const int64_t n = in->token_count;
        if (in->target_hidden_position != n - 2)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        "the target's hidden state is at position " + std::to_string(in->target_hidden_position) +
                            " of a sequence of " + std::to_string(n) + " tokens; draft.recurrent reads the token the "
                            "target drew from it (position " + std::to_string(n - 1) +
                            "), so it needs an acceptor that verifies");
        const int64_t vocab = d.embedding.size(0);
        std::copy(h, h + hidden_size, s.state.begin());
        const float* embedding = d.embedding.data_ptr<float>();
        int32_t token = in->tokens[n - 1];
        float* rows = s.rows.prepare(d.length, vocab);
        s.tokens.resize(static_cast<size_t>(d.length));
        int64_t kept = d.length;
        for (int64_t i = 0; i < d.length; ++i) {
            if (token < 0 || token >= vocab)
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, "token " + std::to_string(token) + " is outside the target's " +
                                                             std::to_string(vocab) + "-token vocabulary");
            d.draft.advance_row(s.state.data(), embedding + static_cast<int64_t>(token) * hidden_size,
                                s.cell_scratch.data());
            d.draft.digit_logits_row(s.state.data(), s.head_logits.data());
            float* row = rows + i * vocab;
            float probability = 0.0f;
            if (d.argmax) {
                token = most_likely(s, s.head_logits.data(), in->sampling, row, &probability);
                std::fill(row, row + vocab, 0.0f);
                row[token] = 1.0f;
            } else {
                fill_row(s, s.head_logits.data(), in->sampling, row);
                token = drafts::sample_index(d.rng, row, vocab);
                probability = row[token];
            }
            s.tokens[static_cast<size_t>(i)] = token;
            const bool stop = probability < d.stop_probability;
            if (stop) {
                kept = i + 1;
                break;
            }
        }
        drafts::set_chain(out, s.tokens, s.parents, s.rows, kept);
    });
}

const cdz_drafter_vtable vtable = {
    sizeof(cdz_drafter_vtable), create, destroy, get_info, session_create, session_destroy, propose,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0",
    "a recurrent draft on the target's last hidden state that reads each token it reaches, proposing a chain",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return cadenza::sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, cadenza::torch_support::describe_exception);
}
