// test.markov_backbone: a test double of a backbone. Its "model" is a fixed
// random table of next-token logits per previous token, a smaller term that
// depends on the whole context through a rolling hash, and an end-token logit
// that rises once the context holds `end_after` audio tokens. Like a real
// model it keeps a per-position cache (the rolling state and the audio
// count), extends it for a tree from each node's parent, and compacts the
// committed path into it without recomputing: a wrong compaction shows up as
// different logits than evaluating the sequence from scratch.
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "markov_table.h"
#include "simulated_weights.h"

namespace {

const cdz_host_api* host = nullptr;

const cdz_param_spec params[] = {
    {"text_tokens", CDZ_PARAM_INT, "128", 1, 1, 4096, nullptr, "size of the text range"},
    {"audio_tokens", CDZ_PARAM_INT, "32", 1, 2, 4096, nullptr, "size of the audio range"},
    {"hidden_size", CDZ_PARAM_INT, "8", 1, 1, 1024, nullptr, "width of the hidden states it reports"},
    {"end_after", CDZ_PARAM_INT, "40", 1, 1, 100000, nullptr, "audio tokens before the end token dominates"},
    {"sharpness", CDZ_PARAM_FLOAT, "3.0", 1, 0, 100, nullptr, "scale of the random logits"},
    {"context_weight", CDZ_PARAM_FLOAT, "0.5", 1, 0, 100, nullptr, "scale of the context-dependent term"},
    {"weight_megabytes", CDZ_PARAM_FLOAT, "0.0", 1, 0, 4096, nullptr,
     "weights streamed per forward pass, to cost like a memory-bound model (benchmarks)"},
    {"seed", CDZ_PARAM_INT, "7", 1, 0, 1e9, nullptr, "seed of the logit table"},
    {"max_positions", CDZ_PARAM_INT, "0", 1, 0, 1000000, nullptr,
     "the max_sequence_length it reports (0: none), so that the engine refuses prompts too long for it"},
    {"fail_on_token", CDZ_PARAM_INT, "-1", 1, -1, 1000000, nullptr,
     "a forward pass given this token fails with an internal error, as a plugin's bug would (-1: never)"},
    {"phone_markers", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr, "text ids may come among the audio: [text][audio][start][end]"},
    {"irreproducible", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr,
     "each instance adds the count of instances made before it in this process to its seed, as a plugin with hidden "
     "state would: the same synthesis on a new engine says something else"},
};

std::atomic<int64_t> instances_made{0};

struct Model {
    int64_t text_tokens, audio_tokens, hidden_size, end_after;
    int64_t max_positions, fail_on_token;
    int phone_markers;
    double context_weight;
    int64_t vocab;
    int32_t audio_start, end_token;
    int64_t audio_offset;
    std::vector<float> table;  // [vocab, vocab]
    std::unique_ptr<cadenza::test::SimulatedWeights> weights;
};

// What the cache holds per position.
struct CacheEntry {
    uint64_t state;       // rolling hash of the context up to here
    int64_t audio_count;  // audio tokens in the context up to here
};

struct Session {
    const Model* model;
    int64_t capacity;
    std::vector<CacheEntry> cache;    // committed positions
    std::vector<CacheEntry> pending;  // the last forward's nodes
    std::vector<int32_t> pending_parents;
};

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// In [-1, 1): the context term of logit `a` at a position with `state`.
float context_term(uint64_t state, int64_t a) {
    return static_cast<float>(mix(state ^ static_cast<uint64_t>(a) * 0x632be59bd9b4e019ULL) >> 11) * 0x1.0p-52f - 1.0f;
}

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
        double sharpness = 0, weight_megabytes = 0;
        int64_t seed = 0;
        int irreproducible = 0;
        cdz_status* status = nullptr;
        if ((status = host->params_get_int(args->params, "text_tokens", &m->text_tokens)) ||
            (status = host->params_get_int(args->params, "audio_tokens", &m->audio_tokens)) ||
            (status = host->params_get_int(args->params, "hidden_size", &m->hidden_size)) ||
            (status = host->params_get_int(args->params, "end_after", &m->end_after)) ||
            (status = host->params_get_int(args->params, "max_positions", &m->max_positions)) ||
            (status = host->params_get_int(args->params, "fail_on_token", &m->fail_on_token)) ||
            (status = host->params_get_float(args->params, "sharpness", &sharpness)) ||
            (status = host->params_get_float(args->params, "context_weight", &m->context_weight)) ||
            (status = host->params_get_int(args->params, "seed", &seed)) ||
            (status = host->params_get_bool(args->params, "phone_markers", &m->phone_markers)) ||
            (status = host->params_get_bool(args->params, "irreproducible", &irreproducible)) ||
            (status = host->params_get_float(args->params, "weight_megabytes", &weight_megabytes))) {
            delete m;
            return status;
        }
        const cadenza::test::MarkovLayout layout{m->text_tokens, m->audio_tokens, m->phone_markers != 0};
        m->audio_start = layout.audio_start();
        m->end_token = layout.end_token();
        m->audio_offset = layout.audio_offset();
        m->vocab = layout.vocab();
        const int64_t made_before = instances_made++;
        if (irreproducible) seed += made_before;
        m->table = cadenza::test::markov_table(layout, sharpness, seed);
        m->weights = std::make_unique<cadenza::test::SimulatedWeights>(weight_megabytes);
        *out_ctx = m;
        return nullptr;
    });
}

void destroy(void* ctx) { delete static_cast<Model*>(ctx); }

cdz_status* get_info(void* ctx, cdz_backbone_info* out) {
    const auto* m = static_cast<const Model*>(ctx);
    out->vocab_size = m->vocab;
    out->hidden_size = m->hidden_size;
    out->max_sequence_length = m->max_positions;
    out->tokens_per_node = 1;
    out->text_token_offset = 0;
    out->text_token_count = m->text_tokens;
    if (out->struct_size >= offsetof(cdz_backbone_info, phone_markers) + sizeof(out->phone_markers))
        out->phone_markers = m->phone_markers;
    out->audio_token_offset = m->audio_offset;
    out->audio_token_count = m->audio_tokens;
    out->audio_start_token = m->audio_start;
    out->end_token = m->end_token;
    return nullptr;
}

cdz_status* session_create(void* ctx, int64_t capacity, void** out_session) {
    return guarded([&]() -> cdz_status* {
        auto* session = new Session{static_cast<const Model*>(ctx), capacity, {}, {}, {}};
        session->cache.reserve(static_cast<size_t>(capacity));
        *out_session = session;
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
        if (static_cast<int64_t>(s->cache.size()) + n > s->capacity)
            return fail(CDZ_STATUS_INVALID_ARGUMENT, "the tree does not fit the cache");
        for (int32_t i = 0; i < n; ++i)
            if (tree->parents[i] < -1 || tree->parents[i] >= i || tree->tokens[i] < 0 || tree->tokens[i] >= m.vocab)
                return fail(CDZ_STATUS_INVALID_ARGUMENT, "malformed tree at node " + std::to_string(i));
        for (int32_t i = 0; i < n; ++i)
            if (tree->tokens[i] == m.fail_on_token)
                return fail(CDZ_STATUS_INTERNAL, "simulated bug on token " + std::to_string(m.fail_on_token));
        const CacheEntry root = s->cache.empty() ? CacheEntry{0x5eed, 0} : s->cache.back();
        const int64_t logits_shape[2] = {n, m.vocab};
        DLManagedTensor* logits = host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, logits_shape, 2);
        const int64_t hidden_shape[2] = {n, m.hidden_size};
        DLManagedTensor* hidden = want_hidden ? host->tensor_create_cpu(DLDataType{kDLFloat, 32, 1}, hidden_shape, 2) : nullptr;
        if (!logits || (want_hidden && !hidden)) {
            if (logits) logits->deleter(logits);
            if (hidden) hidden->deleter(hidden);
            return fail(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
        }
        m.weights->apply(n);
        s->pending.resize(static_cast<size_t>(n));
        for (int32_t i = 0; i < n; ++i) {
            const int32_t token = tree->tokens[i];
            const CacheEntry& parent = tree->parents[i] < 0 ? root : s->pending[tree->parents[i]];
            CacheEntry& entry = s->pending[i];
            entry.state = mix(parent.state ^ static_cast<uint64_t>(token));
            entry.audio_count = parent.audio_count + is_audio(m, token);
            float* row = static_cast<float*>(logits->dl_tensor.data) + static_cast<size_t>(i) * m.vocab;
            const float* table_row = m.table.data() + static_cast<size_t>(token) * m.vocab;
            for (int64_t a = 0; a < m.vocab; ++a)
                row[a] = table_row[a] + static_cast<float>(m.context_weight) * context_term(entry.state, a);
            row[m.end_token] = entry.audio_count >= m.end_after ? 50.0f : -50.0f;
            if (hidden) {
                float* h = static_cast<float*>(hidden->dl_tensor.data) + static_cast<size_t>(i) * m.hidden_size;
                for (int64_t d = 0; d < m.hidden_size; ++d) h[d] = context_term(entry.state, d);
            }
        }
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
        if (node < 0 || node >= static_cast<int32_t>(s->pending.size()) || s->pending_parents[node] != expected_parent)
            return fail(CDZ_STATUS_INVALID_ARGUMENT, "commit path is not a root-to-leaf path of the last tree");
        expected_parent = node;
    }
    // Compaction: the path's cache entries move into place; nothing is recomputed.
    for (int32_t k = 0; k < length; ++k) s->cache.push_back(s->pending[path[k]]);
    s->pending.clear();
    s->pending_parents.clear();
    return nullptr;
}

cdz_status* session_rewind(void* raw, int64_t length) {
    auto* s = static_cast<Session*>(raw);
    if (length < 0 || length > static_cast<int64_t>(s->cache.size()))
        return fail(CDZ_STATUS_INVALID_ARGUMENT, "rewind beyond the committed prefix");
    s->cache.resize(static_cast<size_t>(length));
    return nullptr;
}

cdz_status* session_length(void* raw, int64_t* out) {
    *out = static_cast<int64_t>(static_cast<Session*>(raw)->cache.size());
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
