/* acceptor.bias: the relaxed acceptance of Speech Speculative Decoding
 * (SSD, Lin et al., Interspeech 2025), in plain C99 against cadenza/plugin.h
 * alone. Like the SDK template, it is meant to be copied.
 *
 * Standard speculative sampling accepts a draft token x, drawn from the draft
 * distribution q, with probability min(1, p(x) / q(x)), p being the target's
 * distribution; on rejection it samples the replacement from
 * norm(max(0, p - q)). The output is then distributed exactly as p. Speech
 * tokens are redundant (different tokens sound alike), so SSD tolerates some
 * mismatch and accepts x when
 *
 *     u < min(1, p(x) / q(x)) + beta,   u uniform in [0, 1).
 *
 * beta = 0 is standard speculative sampling; a larger beta accepts more
 * drafts (longer accepted runs, fewer target passes) at the price of output
 * no longer distributed exactly as p. The paper uses beta = 0.4.
 *
 * Trees. The walk starts at the committed prefix. At each level the children
 * of the current node are tried in node-index order against a distribution r
 * that starts as the target's row after the node; after each rejected child
 * r becomes norm(max(0, r - q)) with q that child's draft row (recursive
 * rejection sampling, as in SpecInfer). The first accepted child becomes the
 * current node. When every child is rejected, the correction is sampled from
 * the final r; when the current node has no children (all drafts passed),
 * the bonus token is sampled from the target's row after it.
 *
 * Random numbers, in this order (acceptor.exact consumes them the same way,
 * so with beta = 0 both give identical outputs for the same seed):
 *   1. one host->rng_uniform for each child tried, in the order above;
 *   2. one host->sample_index over r at the level where the walk stops.
 * The arithmetic is shared with acceptor.exact as well: rows are divided by
 * their sums taken in double (in eight interleaved partial sums, row_mass),
 * and the residual is computed in double per entry, stored as float and
 * summed the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cadenza/plugin.h"

#define PLUGIN_NAME "acceptor.bias"

static const cdz_host_api* host;

static const cdz_param_spec params[] = {
    {"beta", CDZ_PARAM_FLOAT, "0.4", 1, 0.0, 1.0, NULL,
     "tolerance added to the acceptance probability min(1, p/q); 0 is exact speculative sampling"},
};

typedef struct acceptor {
    double beta;
    cdz_rng* rng;
    /* Two rows of scratch for the residual, grown as needed and kept between
     * calls so that accept() does not allocate in the steady state. */
    float* scratch[2];
    int64_t scratch_size;
} acceptor;

/* A status whose message starts with the plugin name. */
static cdz_status* make_error(cdz_status_code code, const char* message) {
    char text[256];
    snprintf(text, sizeof(text), PLUGIN_NAME ": %s", message);
    return host->status_create(code, text);
}

static cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    acceptor* self;
    cdz_status* status;
    if (!args || !out_ctx) return make_error(CDZ_STATUS_INVALID_ARGUMENT, "args or out_ctx is NULL");
    *out_ctx = NULL;
    if (!args->rng) return make_error(CDZ_STATUS_INVALID_ARGUMENT, "no random stream in the instance args");
    self = (acceptor*)calloc(1, sizeof(acceptor));
    if (!self) return make_error(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    if ((status = host->params_get_float(args->params, "beta", &self->beta))) {
        free(self);
        return status;
    }
    self->rng = args->rng;
    *out_ctx = self;
    return NULL;
}

static void destroy(void* ctx) {
    acceptor* self = (acceptor*)ctx;
    if (!self) return;
    free(self->scratch[0]);
    free(self->scratch[1]);
    free(self);
}

static cdz_status* get_info(void* ctx, cdz_acceptor_info* out) {
    if (!ctx || !out) return make_error(CDZ_STATUS_INVALID_ARGUMENT, "ctx or out is NULL");
    out->verifies = 1;
    out->needs_draft_probabilities = 1; /* without them drafts count as greedy */
    if (CDZ_STRUCT_HAS(out, cdz_acceptor_info, reads_target_rows)) out->reads_target_rows = 1;
    return NULL;
}

/* Row r of the target (0: after the prefix, i + 1: after node i). Through the
 * host's target_row when it gives one (plugin ABI 1.1: get_info sets
 * reads_target_rows, so the host computes only the rows a step asks for),
 * else from target_probabilities. NULL when the host could not give it. */
static const float* target_row(const cdz_accept_input* in, int32_t r) {
    if (in->target_row) return in->target_row(in->target_row_ctx, r);
    return in->target_probabilities + (int64_t)r * in->vocab_size;
}

/* Checks the call before any random number is drawn, so that a bad input
 * neither crashes nor moves the random stream. Writes a message into `text`
 * and returns its code, or returns CDZ_STATUS_OK. */
static cdz_status_code check_input(const cdz_accept_input* in, const cdz_accept_output* out, char* text,
                                   size_t size) {
    const cdz_token_tree* tree = in->tree;
    int32_t i;
    if (in->struct_size < sizeof(cdz_accept_input) || out->struct_size < sizeof(cdz_accept_output)) {
        snprintf(text, size, "the input or output struct is smaller than this plugin's");
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (!tree) {
        snprintf(text, size, "the token tree is NULL");
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (tree->node_count < 0) {
        snprintf(text, size, "the tree has a negative node count %ld", (long)tree->node_count);
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (tree->tokens_per_node != 1) {
        snprintf(text, size, "only single-codebook trees are supported (tokens_per_node = %ld)",
                 (long)tree->tokens_per_node);
        return CDZ_STATUS_UNSUPPORTED;
    }
    if (in->vocab_size <= 0 || in->vocab_size > INT32_MAX) {
        snprintf(text, size, "the vocabulary size must be in [1, 2^31), got %lld", (long long)in->vocab_size);
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (!in->target_probabilities && !in->target_row) {
        snprintf(text, size, "target probabilities are NULL and there is no target_row (verifies = 1)");
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (tree->node_count > 0 && (!tree->tokens || !tree->parents || !out->accepted_nodes)) {
        snprintf(text, size, "the tree's tokens or parents, or accepted_nodes, are NULL");
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (!out->emitted_tokens) {
        snprintf(text, size, "emitted_tokens is NULL");
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    if (out->accepted_capacity < tree->node_count || out->emitted_capacity < tree->node_count + 1) {
        snprintf(text, size, "the output arrays have room for %ld accepted and %ld emitted tokens, a tree of %ld nodes "
                 "needs %ld and %ld", (long)out->accepted_capacity, (long)out->emitted_capacity,
                 (long)tree->node_count, (long)tree->node_count, (long)tree->node_count + 1);
        return CDZ_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < tree->node_count; ++i) {
        if (tree->parents[i] < -1 || tree->parents[i] >= i) {
            snprintf(text, size, "node %ld has parent %ld; a parent must be -1 or an earlier node", (long)i,
                     (long)tree->parents[i]);
            return CDZ_STATUS_INVALID_ARGUMENT;
        }
        if (tree->tokens[i] < 0 || tree->tokens[i] >= in->vocab_size) {
            snprintf(text, size, "node %ld has token %ld, outside [0, %lld)", (long)i, (long)tree->tokens[i],
                     (long long)in->vocab_size);
            return CDZ_STATUS_INVALID_ARGUMENT;
        }
    }
    return CDZ_STATUS_OK;
}

/* Sums are taken in double in eight interleaved partial sums: entry i goes
 * to lane i % 8 for i < 8 * (count / 8), the lanes are added as
 * ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), then the remaining entries in
 * order. Eight independent sums run about four times as fast as one running
 * sum, which waits for each addition before the next. */
#define SUM_LANES 8

static double add_lanes(const double lane[SUM_LANES]) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* Whether a float is negative (other than -0), infinite or NaN: as unsigned
 * bits, the others are those below +infinity's. */
static unsigned is_invalid_probability(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof(bits));
    return bits >= 0x7f800000u && bits != 0x80000000u;
}

/* The sum of a probability row in double. Rows may be off from 1 by
 * rounding, so every ratio below divides by this. Returns -1 if an entry is
 * negative, infinite or NaN. */
static double row_mass(const float* row, int64_t vocab) {
    double lane[SUM_LANES] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double total;
    unsigned invalid = 0;
    int64_t i, j;
    for (i = 0; i + SUM_LANES <= vocab; i += SUM_LANES)
        for (j = 0; j < SUM_LANES; ++j) {
            invalid |= is_invalid_probability(row[i + j]);
            lane[j] += (double)row[i + j];
        }
    total = add_lanes(lane);
    for (; i < vocab; ++i) {
        invalid |= is_invalid_probability(row[i]);
        total += (double)row[i];
    }
    return invalid ? -1.0 : total;
}

/* next = max(0, r / r_mass - q / q_mass) per entry, in double, stored as
 * float; q is one-hot at `token` when NULL (greedy drafts). Returns the sum
 * of next, taken as row_mass takes it. */
static double subtract_rows(const float* r, double r_mass, const float* q, double q_mass, int32_t token,
                            int64_t vocab, float* next) {
    double lane[SUM_LANES] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double total, q_i, difference;
    int64_t i, j;
    for (i = 0; i + SUM_LANES <= vocab; i += SUM_LANES)
        for (j = 0; j < SUM_LANES; ++j) {
            q_i = q ? (double)q[i + j] / q_mass : (i + j == token ? 1.0 : 0.0);
            difference = (double)r[i + j] / r_mass - q_i;
            next[i + j] = (float)(difference > 0.0 ? difference : 0.0);
            lane[j] += (double)next[i + j];
        }
    total = add_lanes(lane);
    for (; i < vocab; ++i) {
        q_i = q ? (double)q[i] / q_mass : (i == token ? 1.0 : 0.0);
        difference = (double)r[i] / r_mass - q_i;
        next[i] = (float)(difference > 0.0 ? difference : 0.0);
        total += (double)next[i];
    }
    return total;
}

/* min(1, p / q) for normalized probabilities. q = 0 means the draft's own
 * distribution calls x impossible; accept it then whenever the target allows. */
static double acceptance_probability(double p, double q) {
    double ratio;
    if (q <= 0.0) return p > 0.0 ? 1.0 : 0.0;
    ratio = p / q;
    return ratio < 1.0 ? ratio : 1.0;
}

static cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    acceptor* self = (acceptor*)ctx;
    const cdz_token_tree* tree;
    int64_t vocab, i, token;
    int32_t current = -1; /* the node whose children are judged; -1: the prefix */
    char text[200];
    cdz_status_code code;

    if (!self || !in || !out) return make_error(CDZ_STATUS_INVALID_ARGUMENT, "ctx, input or output is NULL");
    out->accepted_count = 0;
    out->emitted_count = 0;
    if ((code = check_input(in, out, text, sizeof(text))) != CDZ_STATUS_OK) return make_error(code, text);
    tree = in->tree;
    vocab = in->vocab_size;

    if (vocab > self->scratch_size) {
        for (i = 0; i < 2; ++i) {
            float* grown = (float*)realloc(self->scratch[i], (size_t)vocab * sizeof(float));
            if (!grown) return make_error(CDZ_STATUS_OUT_OF_MEMORY, "out of memory for the residual");
            self->scratch[i] = grown;
        }
        self->scratch_size = vocab;
    }

    for (;;) {
        /* r starts as the target's row after `current` and moves into the
         * scratch rows (alternately) once rejections have updated it. */
        const float* residual = target_row(in, current + 1);
        double residual_mass = residual ? row_mass(residual, vocab) : -1.0;
        int which_scratch = 0;
        int32_t child, accepted = -1;

        if (!residual) {
            snprintf(text, sizeof(text), "the host gave no target row %ld", (long)(current + 1));
            return make_error(CDZ_STATUS_INVALID_ARGUMENT, text);
        }
        if (!(residual_mass > 0.0)) {
            snprintf(text, sizeof(text), "target row %ld is invalid or has no probability mass", (long)(current + 1));
            return make_error(CDZ_STATUS_INVALID_ARGUMENT, text);
        }

        for (child = current + 1; child < tree->node_count; ++child) {
            const int32_t x = tree->tokens[child];
            const float* draft = NULL;
            double draft_mass = 1.0, u, next_mass;
            float* next;
            if (tree->parents[child] != current) continue;
            if (in->draft_probabilities) {
                draft = in->draft_probabilities + (int64_t)child * vocab;
                draft_mass = row_mass(draft, vocab);
                if (!(draft_mass > 0.0)) {
                    snprintf(text, sizeof(text), "draft row %ld is invalid or has no probability mass", (long)child);
                    return make_error(CDZ_STATUS_INVALID_ARGUMENT, text);
                }
            }

            /* The SSD rule. The sum is exactly min(1, p/q) when beta = 0. */
            u = host->rng_uniform(self->rng);
            if (u < acceptance_probability(residual[x] / residual_mass, draft ? draft[x] / draft_mass : 1.0) +
                        self->beta) {
                accepted = child;
                break;
            }

            /* Rejected: r <- norm(max(0, r - q)) for the next sibling or the
             * correction. With no mass left (r = q up to rounding) keep r. */
            next = self->scratch[which_scratch];
            next_mass = subtract_rows(residual, residual_mass, draft, draft_mass, x, vocab, next);
            if (next_mass > 0.0) {
                residual = next;
                residual_mass = next_mass;
                which_scratch ^= 1;
            }
        }

        if (accepted < 0) {
            /* The target's token: the correction, or the bonus at a leaf. */
            token = host->sample_index(self->rng, residual, vocab);
            if (token < 0 || token >= vocab) return make_error(CDZ_STATUS_INTERNAL, "the host's sample_index failed");
            out->emitted_tokens[out->emitted_count++] = (int32_t)token;
            return NULL;
        }
        out->accepted_nodes[out->accepted_count++] = accepted;
        out->emitted_tokens[out->emitted_count++] = tree->tokens[accepted];
        current = accepted;
    }
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
    PLUGIN_NAME,
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.0.0",
    "SSD relaxed speculative sampling: accept if u < min(1, p/q) + beta",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

static const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    if (host_api->abi_major != CDZ_PLUGIN_ABI_MAJOR)
        return host_api->status_create(CDZ_STATUS_ABI_MISMATCH, PLUGIN_NAME ": host ABI major differs");
    host = host_api;
    out->struct_size = sizeof(cdz_plugin_list);
    out->descriptors = descriptors;
    out->count = 1;
    return NULL;
}
