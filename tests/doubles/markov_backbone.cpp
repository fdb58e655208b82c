// test.markov_backbone: a test double of a backbone. Its "model" is a fixed
// random table of next-token logits per previous token, plus an end-token
// logit that rises once the context holds `end_after` audio tokens. Its
// output depends on the whole context (through that count), so evaluating a
// tree and committing a path must give the same logits as evaluating the
// path from scratch, which is what a real KV cache has to guarantee.
#include <cmath>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace {

const cdz_host_api* host = nullptr;

const cdz_param_spec params[] = {
    {"text_tokens", CDZ_PARAM_INT, "128", 1, 1, 4096, nullptr, "size of the text range"},
    {"audio_tokens", CDZ_PARAM_INT, "32", 1, 2, 4096, nullptr, "size of the audio range"},
    {"hidden_size", CDZ_PARAM_INT, "8", 1, 1, 1024, nullptr, "width of the hidden states it reports"},
    {"end_after", CDZ_PARAM_INT, "40", 1, 1, 100000, nullptr, "audio tokens before the end token dominates"},
    {"sharpness", CDZ_PARAM_FLOAT, "3.0", 1, 0, 100, nullptr, "scale of the random logits"},
    {"seed", CDZ_PARAM_INT, "7", 1, 0, 1e9, nullptr, "seed of the logit table"},
};

struct Model {
    int64_t text_tokens, audio_tokens, hidden_size, end_after;
    int64_t vocab;
    int32_t audio_start, end_token;
    int64_t audio_offset;
    std::vector<float> table;  // [vocab, vocab]
};

struct Session {
    const Model* model;
    int64_t capacity;
    std::vector<int32_t> committed;
    std::vector<int32_t> pending_tokens, pending_parents;
};

cdz_status* fail(cdz_status_code code, const std::string& message) {
    return host->status_create(code, ("test.markov_backbone: " + message).c_str());
}

template <typename Body>
cdz_status* guarded(Body&& body) {
    try {
        return body();
    } catch (const std::exception& e) {
        return fail(CDZ_STATUS_INTERNAL, e.what());
    }
}

bool is_audio(const Model& m, int32_t token) { return token >= m.audio_offset && token < m.audio_offset + m.audio_tokens; }

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return guarded([&]() -> cdz_status* {
        auto* m = new Model{};
        double sharpness = 0;
        int64_t seed = 0;
        cdz_status* status = nullptr;
        if ((status = host->params_get_int(args->params, "text_tokens", &m->text_tokens)) ||
            (status = host->params_get_int(args->params, "audio_tokens", &m->audio_tokens)) ||
            (status = host->params_get_int(args->params, "hidden_size", &m->hidden_size)) ||
            (status = host->params_get_int(args->params, "end_after", &m->end_after)) ||
            (status = host->params_get_float(args->params, "sharpness", &sharpness)) ||
            (status = host->params_get_int(args->params, "seed", &seed))) {
            delete m;
            return status;
        }
        m->audio_start = static_cast<int32_t>(m->text_tokens);
        m->end_token = m->audio_start + 1;
        m->audio_offset = m->end_token + 1;
        m->vocab = m->audio_offset + m->audio_tokens;
        m->table.resize(static_cast<size_t>(m->vocab * m->vocab));
        std::mt19937_64 generator(static_cast<uint64_t>(seed));
        std::normal_distribution<float> normal(0.0f, static_cast<float>(sharpness));
        for (auto& logit : m->table) logit = normal(generator);
        *out_ctx = m;
        return nullptr;
    });
}

void destroy(void* ctx) { delete static_cast<Model*>(ctx); }

cdz_status* get_info(void* ctx, cdz_backbone_info* out) {
    const auto* m = static_cast<const Model*>(ctx);
    out->vocab_size = m->vocab;
    out->hidden_size = m->hidden_size;
    out->max_sequence_length = 0;
    out->tokens_per_node = 1;
    out->text_token_offset = 0;
    out->text_token_count = m->text_tokens;
    out->audio_token_offset = m->audio_offset;
    out->audio_token_count = m->audio_tokens;
    out->audio_start_token = m->audio_start;
    out->end_token = m->end_token;
    return nullptr;
}

cdz_status* session_create(void* ctx, int64_t capacity, void** out_session) {
    return guarded([&]() -> cdz_status* {
        *out_session = new Session{static_cast<const Model*>(ctx), capacity, {}, {}, {}};
        return nullptr;
    });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

cdz_status* session_forward(void* raw, const cdz_token_tree* tree, int want_hidden, cdz_backbone_output* out) {
    return guarded([&]() -> cdz_status* {
        auto* s = static_cast<Session*>(raw);
        const Model& m = *s->model;
        const int32_t n = tree->node_count;
        if (n <= 0) return fail(CDZ_STATUS_INVALID_ARGUMENT, "empty tree");
        if (static_cast<int64_t>(s->committed.size()) + n > s->capacity)
            return fail(CDZ_STATUS_INVALID_ARGUMENT, "the tree does not fit the cache");
        int64_t committed_audio = 0;
        for (int32_t token : s->committed) committed_audio += is_audio(m, token);
        const int64_t logits_shape[2] = {n, m.vocab};
        DLManagedTensor* logits = host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, logits_shape, 2);
        const int64_t hidden_shape[2] = {n, m.hidden_size};
        DLManagedTensor* hidden = want_hidden ? host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, hidden_shape, 2) : nullptr;
        std::vector<int64_t> audio_in_context(n);
        for (int32_t i = 0; i < n; ++i) {
            const int32_t parent = tree->parents[i];
            const int32_t token = tree->tokens[i];
            if (parent < -1 || parent >= i || token < 0 || token >= m.vocab) {
                logits->deleter(logits);
                if (hidden) hidden->deleter(hidden);
                return fail(CDZ_STATUS_INVALID_ARGUMENT, "malformed tree at node " + std::to_string(i));
            }
            audio_in_context[i] = (parent < 0 ? committed_audio : audio_in_context[parent]) + is_audio(m, token);
            float* row = static_cast<float*>(logits->dl_tensor.data) + static_cast<size_t>(i) * m.vocab;
            std::memcpy(row, m.table.data() + static_cast<size_t>(token) * m.vocab, sizeof(float) * m.vocab);
            row[m.end_token] = audio_in_context[i] >= m.end_after ? 50.0f : -50.0f;
            if (hidden) {
                float* h = static_cast<float*>(hidden->dl_tensor.data) + static_cast<size_t>(i) * m.hidden_size;
                for (int64_t d = 0; d < m.hidden_size; ++d)
                    h[d] = std::sin(0.1f * static_cast<float>(token * (d + 1))) + 0.01f * static_cast<float>(audio_in_context[i]);
            }
        }
        s->pending_tokens.assign(tree->tokens, tree->tokens + n);
        s->pending_parents.assign(tree->parents, tree->parents + n);
        out->logits = logits;
        out->hidden = hidden;
        return nullptr;
    });
}

cdz_status* session_commit(void* raw, const int32_t* path, int32_t length) {
    auto* s = static_cast<Session*>(raw);
    int32_t expected_parent = -1;
    for (int32_t k = 0; k < length; ++k) {
        const int32_t node = path[k];
        if (node < 0 || node >= static_cast<int32_t>(s->pending_tokens.size()) || s->pending_parents[node] != expected_parent)
            return fail(CDZ_STATUS_INVALID_ARGUMENT, "commit path is not a root-to-leaf path of the last tree");
        expected_parent = node;
    }
    for (int32_t k = 0; k < length; ++k) s->committed.push_back(s->pending_tokens[path[k]]);
    s->pending_tokens.clear();
    s->pending_parents.clear();
    return nullptr;
}

cdz_status* session_rewind(void* raw, int64_t length) {
    auto* s = static_cast<Session*>(raw);
    if (length < 0 || length > static_cast<int64_t>(s->committed.size()))
        return fail(CDZ_STATUS_INVALID_ARGUMENT, "rewind beyond the committed prefix");
    s->committed.resize(static_cast<size_t>(length));
    return nullptr;
}

cdz_status* session_length(void* raw, int64_t* out) {
    *out = static_cast<int64_t>(static_cast<Session*>(raw)->committed.size());
    return nullptr;
}

const cdz_backbone_vtable vtable = {
    sizeof(cdz_backbone_vtable), create, destroy, get_info, session_create, session_destroy,
    session_forward, session_commit, session_rewind, session_length,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "test.markov_backbone",
    CDZ_PLUGIN_KIND_BACKBONE, "1.0.0", "test double: a random Markov table standing in for a language model",
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
