/* Two plugins as a third party built them against plugin ABI 1.0, compiled
 * with the frozen copy of that version's headers (tests/abi/frozen-1.0/):
 *   frozen.letters  a frontend: 'a'..'z' -> 1..26, ' ' -> 27, the rest skipped
 *   frozen.greedy   an acceptor that never keeps a draft and emits the most
 *                   probable token of row 0 (plain greedy decoding), with a
 *                   session that checks every step's sequence against the
 *                   prompt and the tokens committed so far
 * Every later 1.x host must load and run them (docs/abi.md, versioning):
 * their descriptors and tables are 1.0's, smaller than a later minor's. This
 * file and the frozen headers are never edited to follow the current ones. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cadenza/plugin.h"

#if CDZ_PLUGIN_ABI_MAJOR != 1 || CDZ_PLUGIN_ABI_MINOR != 0
#error "built against the frozen 1.0 headers only"
#endif

static const cdz_host_api* host;

static cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    (void)args;
    *out_ctx = (void*)&host;
    return NULL;
}
static void destroy(void* ctx) { (void)ctx; }

/* frozen.letters */

static const char* const symbols[28] = {"<pad>", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m",
                                        "n",     "o", "p", "q", "r", "s", "t", "u", "v", "w", "x", "y", "z", " "};

static int32_t letter_id(char c) {
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c >= 'a' && c <= 'z') return (int32_t)(c - 'a' + 1);
    return c == ' ' ? 27 : -1;
}

static cdz_status* letters_info(void* ctx, cdz_frontend_info* out) {
    (void)ctx;
    out->vocab_size = 28;
    out->bos_id = -1;
    out->eos_id = -1;
    out->pad_id = 0;
    return NULL;
}

static cdz_status* letters_encode(void* ctx, const char* text, DLManagedTensor** out_ids) {
    int64_t count = 0, i = 0;
    const char* c;
    DLManagedTensor* ids;
    (void)ctx;
    for (c = text; *c; ++c) count += letter_id(*c) >= 0;
    ids = host->tensor_create_cpu((DLDataType){kDLInt, 32, 1}, &count, 1);
    if (!ids) return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "frozen.letters: no memory for the ids");
    for (c = text; *c; ++c)
        if (letter_id(*c) >= 0) ((int32_t*)ids->dl_tensor.data)[i++] = letter_id(*c);
    *out_ids = ids;
    return NULL;
}

static cdz_status* letters_symbol(void* ctx, int32_t id, const char** out_symbol) {
    (void)ctx;
    if (id < 0 || id >= 28) return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "frozen.letters: id out of range");
    *out_symbol = symbols[id];
    return NULL;
}

static const cdz_frontend_vtable letters_vtable = {
    .struct_size = sizeof(cdz_frontend_vtable),
    .create = create,
    .destroy = destroy,
    .get_info = letters_info,
    .encode = letters_encode,
    .token_symbol = letters_symbol,
};

/* frozen.greedy */

/* The sequence a session has seen: the prompt, then every commit. */
typedef struct greedy_session {
    int32_t* tokens;
    int64_t count, capacity;
} greedy_session;

static cdz_status* greedy_info(void* ctx, cdz_acceptor_info* out) {
    (void)ctx;
    out->verifies = 1;
    out->needs_draft_probabilities = 0;
    return NULL;
}

static cdz_status* greedy_accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    const float* row = in->target_probabilities;
    int64_t best = 0, i;
    (void)ctx;
    if (!row) return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "frozen.greedy: no target probabilities");
    if (out->emitted_capacity < 1) return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "frozen.greedy: no room");
    for (i = 1; i < in->vocab_size; ++i)
        if (row[i] > row[best]) best = i;
    out->accepted_count = 0;
    out->emitted_tokens[0] = (int32_t)best;
    out->emitted_count = 1;
    return NULL;
}

static cdz_status* greedy_session_create(void* ctx, void** out_session) {
    greedy_session* session = calloc(1, sizeof(greedy_session));
    (void)ctx;
    if (!session) return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "frozen.greedy: no memory for a session");
    *out_session = session;
    return NULL;
}

static void greedy_session_destroy(void* session) {
    if (session) free(((greedy_session*)session)->tokens);
    free(session);
}

static cdz_status* greedy_append(greedy_session* session, const int32_t* tokens, int64_t count) {
    if (session->count + count > session->capacity) {
        int64_t capacity = 2 * (session->count + count);
        int32_t* grown = realloc(session->tokens, (size_t)capacity * sizeof(int32_t));
        if (!grown) return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "frozen.greedy: no memory for the sequence");
        session->tokens = grown;
        session->capacity = capacity;
    }
    if (count > 0) memcpy(session->tokens + session->count, tokens, (size_t)count * sizeof(int32_t));
    session->count += count;
    return NULL;
}

static cdz_status* greedy_session_reset(void* session, const int32_t* tokens, int64_t count) {
    ((greedy_session*)session)->count = 0;
    return greedy_append(session, tokens, count);
}

static cdz_status* greedy_session_accept(void* session, const cdz_accept_input* in, cdz_accept_output* out) {
    const greedy_session* seen = session;
    if (in->sequence_length != seen->count ||
        (seen->count > 0 && memcmp(in->sequence, seen->tokens, (size_t)seen->count * sizeof(int32_t)) != 0))
        return host->status_create(CDZ_STATUS_INTERNAL,
                                   "frozen.greedy: the step's sequence is not the prompt and the commits");
    return greedy_accept(NULL, in, out);
}

static cdz_status* greedy_session_commit(void* session, const int32_t* tokens, int64_t count) {
    return greedy_append(session, tokens, count);
}

static const cdz_acceptor_vtable greedy_vtable = {
    .struct_size = sizeof(cdz_acceptor_vtable),
    .create = create,
    .destroy = destroy,
    .get_info = greedy_info,
    .accept = greedy_accept,
    .session_create = greedy_session_create,
    .session_destroy = greedy_session_destroy,
    .session_reset = greedy_session_reset,
    .session_accept = greedy_session_accept,
    .session_commit = greedy_session_commit,
};

static const cdz_plugin_descriptor letters = {
    .struct_size = sizeof(cdz_plugin_descriptor),
    .abi_major = CDZ_PLUGIN_ABI_MAJOR,
    .abi_minor = CDZ_PLUGIN_ABI_MINOR,
    .name = "frozen.letters",
    .kind = CDZ_PLUGIN_KIND_FRONTEND,
    .version = "1.0.0",
    .summary = "letters to ids, built against plugin ABI 1.0",
    .param_spec_size = sizeof(cdz_param_spec),
    .vtable = &letters_vtable,
};
static const cdz_plugin_descriptor greedy = {
    .struct_size = sizeof(cdz_plugin_descriptor),
    .abi_major = CDZ_PLUGIN_ABI_MAJOR,
    .abi_minor = CDZ_PLUGIN_ABI_MINOR,
    .name = "frozen.greedy",
    .kind = CDZ_PLUGIN_KIND_ACCEPTOR,
    .version = "1.0.0",
    .summary = "greedy decoding with a session, built against plugin ABI 1.0",
    .param_spec_size = sizeof(cdz_param_spec),
    .vtable = &greedy_vtable,
};
static const cdz_plugin_descriptor* const descriptors[] = {&letters, &greedy};

CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* given, cdz_plugin_list* out) {
    if (!given || !given->status_create) return NULL;
    if (given->abi_major != CDZ_PLUGIN_ABI_MAJOR || given->struct_size < sizeof(cdz_host_api))
        return given->status_create(CDZ_STATUS_ABI_MISMATCH, "frozen plugins: the host's table is too old");
    host = given;
    out->struct_size = sizeof(cdz_plugin_list);
    out->descriptors = descriptors;
    out->count = 2;
    return NULL;
}
