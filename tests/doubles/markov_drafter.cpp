// test.markov_drafter: a test double of a drafter. It drafts from an
// imperfect copy of test.markov_backbone's table (the same table plus
// noise), so some drafts are accepted and some are not, as with a real
// shallow draft model. It proposes `depth` levels with `branching` children
// per node, each node's children drawn i.i.d. from the distribution after it.
// It writes its distributions into the host's lent buffer (or, with
// lent_buffer = false, into a tensor of its own), and checks at each
// proposal that what the host says of the previous one (previous_token_count,
// accepted_nodes) matches the sequence it now continues.
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "markov_table.h"
#include "simulated_weights.h"

namespace {

const cdz_host_api* host = nullptr;

const cdz_param_spec params[] = {
    {"text_tokens", CDZ_PARAM_INT, "128", 1, 1, 4096, nullptr, "as the backbone's"},
    {"audio_tokens", CDZ_PARAM_INT, "32", 1, 2, 4096, nullptr, "as the backbone's"},
    {"end_after", CDZ_PARAM_INT, "40", 1, 1, 100000, nullptr, "as the backbone's"},
    {"sharpness", CDZ_PARAM_FLOAT, "3.0", 1, 0, 100, nullptr, "as the backbone's"},
    {"seed", CDZ_PARAM_INT, "7", 1, 0, 1e9, nullptr, "as the backbone's: the table it copies"},
    {"noise", CDZ_PARAM_FLOAT, "1.0", 1, 0, 100, nullptr, "how far its table is from the backbone's"},
    {"depth", CDZ_PARAM_INT, "3", 1, 1, 16, nullptr, "levels of the tree (a chain's length)"},
    {"branching", CDZ_PARAM_INT, "1", 1, 1, 8, nullptr, "children per node; 1 proposes a chain"},
    {"needs_hidden", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr,
     "ask for the target's hidden state and check that it arrives"},
    {"hidden_size", CDZ_PARAM_INT, "8", 1, 1, 1024, nullptr, "the hidden width to expect"},
    {"phone_markers", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr, "as the backbone's: its vocabulary layout"},
    {"weight_megabytes", CDZ_PARAM_FLOAT, "0.0", 1, 0, 4096, nullptr,
     "weights streamed per draft level, to cost like a small model (benchmarks)"},
    {"nan_probabilities", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr,
     "the last node's distribution holds a NaN, as a broken drafter's would"},
    {"lent_buffer", CDZ_PARAM_BOOL, "true", 0, 0, 0, nullptr,
     "write the distributions into the host's lent buffer; false: a tensor of its own"},
};

struct Drafter {
    cadenza::test::MarkovLayout layout;
    int64_t end_after, depth, branching, hidden_size;
    bool needs_hidden, nan_probabilities, lent_buffer;
    std::vector<float> table;
    cdz_rng* rng;
    std::unique_ptr<cadenza::test::SimulatedWeights> weights;
};

struct Session {
    const Drafter* drafter;
    std::vector<int32_t> tokens, parents;  // the last proposal's tree
    std::vector<float> logits;
    int64_t previous_token_count = 0;      // the sequence's length at the last proposal
};

cdz_status* fail(cdz_status_code code, const std::string& message) {
    return host->status_create(code, ("test.markov_drafter: " + message).c_str());
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    try {
        auto* d = new Drafter{};
        double sharpness = 0, noise = 0, weight_megabytes = 0;
        int64_t seed = 0;
        int needs_hidden = 0, phone_markers = 0, nan_probabilities = 0, lent_buffer = 1;
        cdz_status* status = nullptr;
        if ((status = host->params_get_int(args->params, "text_tokens", &d->layout.text_tokens)) ||
            (status = host->params_get_int(args->params, "audio_tokens", &d->layout.audio_tokens)) ||
            (status = host->params_get_int(args->params, "end_after", &d->end_after)) ||
            (status = host->params_get_float(args->params, "sharpness", &sharpness)) ||
            (status = host->params_get_int(args->params, "seed", &seed)) ||
            (status = host->params_get_float(args->params, "noise", &noise)) ||
            (status = host->params_get_int(args->params, "depth", &d->depth)) ||
            (status = host->params_get_int(args->params, "branching", &d->branching)) ||
            (status = host->params_get_bool(args->params, "needs_hidden", &needs_hidden)) ||
            (status = host->params_get_int(args->params, "hidden_size", &d->hidden_size)) ||
            (status = host->params_get_bool(args->params, "phone_markers", &phone_markers)) ||
            (status = host->params_get_float(args->params, "weight_megabytes", &weight_megabytes)) ||
            (status = host->params_get_bool(args->params, "nan_probabilities", &nan_probabilities)) ||
            (status = host->params_get_bool(args->params, "lent_buffer", &lent_buffer))) {
            delete d;
            return status;
        }
        d->needs_hidden = needs_hidden != 0;
        d->nan_probabilities = nan_probabilities != 0;
        d->lent_buffer = lent_buffer != 0;
        d->layout.audio_after_text = phone_markers != 0;
        d->table = cadenza::test::markov_table(d->layout, sharpness, seed, noise);
        d->rng = args->rng;
        d->weights = std::make_unique<cadenza::test::SimulatedWeights>(weight_megabytes);
        *out_ctx = d;
        return nullptr;
    } catch (const std::exception& e) {
        return fail(CDZ_STATUS_INTERNAL, e.what());
    }
}

void destroy(void* ctx) { delete static_cast<Drafter*>(ctx); }

int32_t max_nodes(const Drafter& d) {
    int64_t total = 0, level = 1;
    for (int64_t k = 0; k < d.depth; ++k) total += (level *= d.branching);
    return static_cast<int32_t>(total);
}

cdz_status* get_info(void* ctx, cdz_drafter_info* out) {
    const auto& d = *static_cast<const Drafter*>(ctx);
    out->max_nodes = max_nodes(d);
    out->max_depth = static_cast<int32_t>(d.depth);
    out->needs_target_hidden = d.needs_hidden ? 1 : 0;
    return nullptr;
}

cdz_status* session_create(void* ctx, int64_t, void** out_session) {
    *out_session = new (std::nothrow) Session{static_cast<const Drafter*>(ctx), {}, {}, {}, 0};
    return *out_session ? nullptr : fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

// What the host says of the previous proposal must match the sequence: its
// length then, and the accepted nodes' tokens right after it, root to leaf.
// previous_token_count = 0: no account (a first proposal, or one outside the loop).
cdz_status* check_previous_proposal(const Session& s, const cdz_draft_input* in) {
    if (in->previous_token_count == 0)
        return in->accepted_count == 0 ? nullptr
                                       : fail(CDZ_STATUS_INTERNAL, "accepted nodes without a previous proposal");
    if (in->previous_token_count != s.previous_token_count)
        return fail(CDZ_STATUS_INTERNAL, "previous_token_count is " + std::to_string(in->previous_token_count) +
                                             ", the last proposal continued " + std::to_string(s.previous_token_count));
    if (in->accepted_count < 0 || (in->accepted_count > 0 && !in->accepted_nodes) ||
        in->previous_token_count + in->accepted_count >= in->token_count)
        return fail(CDZ_STATUS_INTERNAL, "accepted_count does not fit the sequence");
    int32_t parent = -1;
    for (int32_t k = 0; k < in->accepted_count; ++k) {
        const int32_t node = in->accepted_nodes[k];
        if (node < 0 || node >= static_cast<int32_t>(s.tokens.size()) || s.parents[node] != parent ||
            s.tokens[node] != in->tokens[in->previous_token_count + k])
            return fail(CDZ_STATUS_INTERNAL, "accepted node " + std::to_string(node) +
                                                 " is not the next token of the sequence on a root-to-leaf path");
        parent = node;
    }
    return nullptr;
}

cdz_status* propose(void* raw, const cdz_draft_input* in, cdz_draft_output* out) {
    try {
        auto* s = static_cast<Session*>(raw);
        const Drafter& d = *s->drafter;
        const int64_t vocab = d.layout.vocab();
        if (in->token_count < 1) return fail(CDZ_STATUS_INVALID_ARGUMENT, "no tokens to continue");
        if (d.needs_hidden && in->token_count > 1) {
            if (!in->target_hidden) return fail(CDZ_STATUS_INTERNAL, "the target's hidden state did not arrive");
            if (in->target_hidden->ndim != 1 || in->target_hidden->shape[0] != d.hidden_size)
                return fail(CDZ_STATUS_INTERNAL, "the target's hidden state has the wrong shape");
            if (in->target_hidden_position < 0 || in->target_hidden_position >= in->token_count)
                return fail(CDZ_STATUS_INTERNAL, "the hidden state's position is outside the sequence");
        }
        if (cdz_status* status = check_previous_proposal(*s, in)) return status;
        int64_t audio = 0;
        for (int64_t i = 0; i < in->token_count; ++i) audio += d.layout.is_audio(in->tokens[i]);

        const int32_t capacity = max_nodes(d);
        s->tokens.clear();
        s->parents.clear();
        s->previous_token_count = in->token_count;
        DLManagedTensor* probabilities = nullptr;
        float* q = nullptr;
        if (d.lent_buffer) {
            if (!out->lent_probabilities || out->lent_rows < capacity || out->lent_row_size != vocab)
                return fail(CDZ_STATUS_INTERNAL, "the host lent no buffer of max_nodes rows of the vocabulary");
            q = out->lent_probabilities;
        } else {
            const int64_t shape[2] = {capacity, vocab};
            probabilities = host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, shape, 2);
            if (!probabilities) return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
            q = static_cast<float*>(probabilities->dl_tensor.data);
        }
        s->logits.resize(static_cast<size_t>(vocab));

        // Level by level: each frontier node's children come from one distribution.
        std::vector<int32_t> frontier{-1};
        std::vector<int64_t> frontier_audio{audio};
        for (int64_t level = 0; level < d.depth; ++level) {
            std::vector<int32_t> next;
            std::vector<int64_t> next_audio;
            d.weights->apply(static_cast<int64_t>(frontier.size()));
            for (size_t f = 0; f < frontier.size(); ++f) {
                const int32_t parent = frontier[f];
                const int32_t last = parent < 0 ? in->tokens[in->token_count - 1] : s->tokens[parent];
                const float* row = d.table.data() + static_cast<size_t>(last) * vocab;
                std::copy(row, row + vocab, s->logits.begin());
                s->logits[d.layout.end_token()] = frontier_audio[f] >= d.end_after ? 50.0f : -50.0f;
                float* distribution = q + s->tokens.size() * vocab;
                cdz_status* status = host->sampling_probabilities(in->sampling, s->logits.data(), distribution, vocab);
                if (status) {
                    if (probabilities) probabilities->deleter(probabilities);
                    return status;
                }
                for (int64_t b = 0; b < d.branching; ++b) {
                    const auto node = static_cast<int32_t>(s->tokens.size());
                    if (b > 0) std::copy(distribution, distribution + vocab, q + static_cast<size_t>(node) * vocab);
                    const auto token = static_cast<int32_t>(host->sample_index(d.rng, distribution, vocab));
                    s->tokens.push_back(token);
                    s->parents.push_back(parent);
                    next.push_back(node);
                    next_audio.push_back(frontier_audio[f] + d.layout.is_audio(token));
                }
            }
            frontier.swap(next);
            frontier_audio.swap(next_audio);
        }
        if (d.nan_probabilities) q[(s->tokens.size() - 1) * vocab] = std::numeric_limits<float>::quiet_NaN();
        out->tree.struct_size = sizeof(cdz_token_tree);
        out->tree.node_count = static_cast<int32_t>(s->tokens.size());
        out->tree.tokens_per_node = 1;
        out->tree.tokens = s->tokens.data();
        out->tree.parents = s->parents.data();
        out->probabilities = probabilities;
        out->wrote_lent_probabilities = d.lent_buffer ? 1 : 0;
        return nullptr;
    } catch (const std::exception& e) {
        return fail(CDZ_STATUS_INTERNAL, e.what());
    }
}

const cdz_drafter_vtable vtable = {
    sizeof(cdz_drafter_vtable), create, destroy, get_info, session_create, session_destroy, propose,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "test.markov_drafter",
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0", "test double: drafts from a noisy copy of test.markov_backbone's table",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}
