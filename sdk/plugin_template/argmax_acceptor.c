/* example.argmax_acceptor: the SDK's template for a plugin written in plain
 * C99 against cadenza/plugin.h alone. Copy this directory, rename the plugin,
 * and replace accept() with your rule.
 *
 * The rule here is greedy verification: walk the draft tree from the root,
 * accept a child when it is the target's most likely token (and at least
 * min_probability likely), then emit the target's choice after the last
 * accepted node (its argmax, or a sample when mode = "sample"). */
#include <stdlib.h>
#include <string.h>

#include "cadenza/plugin.h"

static const cdz_host_api* host;

static const char* const modes[] = {"argmax", "sample", NULL};

static const cdz_param_spec params[] = {
    {"min_probability", CDZ_PARAM_FLOAT, "0.0", 1, 0.0, 1.0, NULL,
     "accept a draft only if the target gives it at least this probability"},
    {"mode", CDZ_PARAM_STRING, "\"argmax\"", 0, 0.0, 0.0, modes,
     "how the token after the accepted path is chosen"},
    {"max_accept", CDZ_PARAM_INT, "8", 1, 0.0, 64.0, NULL, "accept at most this many drafts per step"},
};

typedef struct acceptor {
    double min_probability;
    int sample;
    int64_t max_accept;
    cdz_rng* rng;
} acceptor;

static cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    acceptor* self;
    const char* mode = NULL;
    cdz_status* status;
    self = (acceptor*)calloc(1, sizeof(acceptor));
    if (!self) return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, "example.argmax_acceptor: out of memory");
    if ((status = host->params_get_float(args->params, "min_probability", &self->min_probability)) ||
        (status = host->params_get_string(args->params, "mode", &mode)) ||
        (status = host->params_get_int(args->params, "max_accept", &self->max_accept))) {
        free(self);
        return status;
    }
    self->sample = strcmp(mode, "sample") == 0;
    self->rng = args->rng;
    *out_ctx = self;
    return NULL;
}

static void destroy(void* ctx) { free(ctx); }

static cdz_status* get_info(void* ctx, cdz_acceptor_info* out) {
    (void)ctx;
    out->verifies = 1;
    out->needs_draft_probabilities = 0;
    out->reads_target_rows = 1; /* the host then computes only the rows target_row() asks for */
    return NULL;
}

/* The target's row after `parent` (-1: after the committed prefix), lent by
 * the host one row at a time, or from the filled matrix of an older host.
 * NULL when the host could not compute it. */
static const float* target_row(const cdz_accept_input* in, int32_t parent) {
    if (in->target_row) return in->target_row(in->target_row_ctx, parent + 1);
    return in->target_probabilities + (int64_t)(parent + 1) * in->vocab_size;
}

static int64_t argmax(const float* row, int64_t count) {
    int64_t best = 0, i;
    for (i = 1; i < count; ++i)
        if (row[i] > row[best]) best = i;
    return best;
}

static cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    const acceptor* self = (const acceptor*)ctx;
    const cdz_token_tree* tree = in->tree;
    const int64_t vocab = in->vocab_size;
    int32_t parent = -1, node;
    const float* row;
    if (!in->target_probabilities && !in->target_row)
        return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "example.argmax_acceptor needs target probabilities");
    out->accepted_count = 0;
    out->emitted_count = 0;
    for (;;) {
        int32_t chosen = -1;
        if (out->accepted_count >= self->max_accept) break;
        if (!(row = target_row(in, parent))) break; /* the host reports why */
        for (node = parent + 1; node < tree->node_count; ++node) {
            const int32_t token = tree->tokens[node];
            if (tree->parents[node] != parent) continue;
            if (token == argmax(row, vocab) && row[token] >= self->min_probability) {
                chosen = node;
                break;
            }
        }
        if (chosen < 0) break;
        out->accepted_nodes[out->accepted_count++] = chosen;
        out->emitted_tokens[out->emitted_count++] = tree->tokens[chosen];
        parent = chosen;
    }
    if (!(row = target_row(in, parent)))
        return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "example.argmax_acceptor: the host gave no target row");
    out->emitted_tokens[out->emitted_count++] =
        (int32_t)(self->sample ? host->sample_index(self->rng, row, vocab) : argmax(row, vocab));
    return NULL;
}

/* Designated initializers: functions appended to the table in later ABI
 * minors are left NULL (the documented default) without a warning. */
static const cdz_acceptor_vtable vtable = {
    .struct_size = sizeof(cdz_acceptor_vtable),
    .create = create,
    .destroy = destroy,
    .get_info = get_info,
    .accept = accept,
};

static const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    "example.argmax_acceptor",
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.0.0",
    "greedy verification, written in plain C (the SDK template)",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

static const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    if (host_api->abi_major != CDZ_PLUGIN_ABI_MAJOR)
        return host_api->status_create(CDZ_STATUS_ABI_MISMATCH, "example.argmax_acceptor: host ABI major differs");
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return NULL;
}
