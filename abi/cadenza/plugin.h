/* cadenza plugin ABI.
 *
 * A plugin library exports one symbol, cdz_plugin_entry. The host calls it
 * once, passing a table of host services; the library answers with
 * descriptors of the plugins it provides. Each descriptor carries a name
 * ("acceptor.bias"), a kind, a version, the ABI version it was built
 * against, its parameter schema and a kind-specific table of function
 * pointers. Instances are opaque `void* ctx` values made by the table's
 * `create` and released by its `destroy`.
 *
 * Rules of the boundary:
 *  - C99 only. No C++ type, no exception, no LibTorch type crosses it.
 *  - Every fallible function returns cdz_status*: NULL on success, otherwise
 *    a status made with host->status_create, which the host frees.
 *  - Tensors cross as DLPack (0.6). A DLManagedTensor* handed to the other
 *    side is released by calling its own deleter, so the producer frees it.
 *  - Structs that may grow start with `struct_size`; the reader of a struct
 *    checks it before touching a field added later (CDZ_STRUCT_HAS). Tables
 *    and structs are append-only: a field is never moved, resized or removed
 *    within a major.
 *  - Versioning (docs/abi.md): this is plugin ABI 1.3 (1.1 added the
 *    target's rows on demand for acceptors, 1.2 the target's cache for
 *    drafters, 1.3 an acceptor's own audio tokens). A minor is bumped for each
 *    addition; a major only for a removal or change. The loader refuses a
 *    plugin of another major, or of a newer minor than the host's, and
 *    accepts every older minor of its major: a struct a plugin hands over
 *    (descriptor, parameter spec, function table) may be as small as its 1.0
 *    version, and the host then uses the documented default of each later field the struct does not
 *    reach (zero; for a function, NULL: the plugin does not have it). A
 *    struct the host hands over is always the host's own, so a plugin reads
 *    every field its header has.
 *  - Threads: the host calls one instance (and its sessions) from one thread
 *    at a time. A codec stream may be driven from another thread than the
 *    one that created it (the pipeline's decode thread), never concurrently
 *    with another call on that stream or its instance's other functions.
 *    Different instances may run on different threads at once.
 *  - tokens_per_node: the host refuses any value but 1 (backbone info,
 *    trees) with CDZ_STATUS_UNSUPPORTED until multi-codebook decoding
 *    exists; the field is there so that it can come without a new major.
 */
#ifndef CADENZA_PLUGIN_H
#define CADENZA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "cadenza/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CDZ_PLUGIN_ABI_MAJOR 1
#define CDZ_PLUGIN_ABI_MINOR 3
#define CDZ_PLUGIN_ENTRY_SYMBOL "cdz_plugin_entry"

/* The size of `type` up to and including `field`: the struct_size a struct
 * must have for its reader to use `field`. */
#define CDZ_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type*)0)->field))
/* Whether the struct `*ptr` of type `type` reaches `field`. */
#define CDZ_STRUCT_HAS(ptr, type, field) ((size_t)(ptr)->struct_size >= CDZ_SIZE_THROUGH(type, field))

#if defined(_WIN32)
#define CDZ_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CDZ_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum cdz_plugin_kind {
    CDZ_PLUGIN_KIND_FRONTEND = 1, /* text to token ids */
    CDZ_PLUGIN_KIND_CODEC = 2,    /* audio <-> codec tokens */
    CDZ_PLUGIN_KIND_BACKBONE = 3, /* the target language model */
    CDZ_PLUGIN_KIND_DRAFTER = 4,  /* proposes a token tree */
    CDZ_PLUGIN_KIND_ACCEPTOR = 5  /* picks the accepted path */
} cdz_plugin_kind;

typedef enum cdz_log_level {
    CDZ_LOG_TRACE = 0,
    CDZ_LOG_DEBUG = 1,
    CDZ_LOG_INFO = 2,
    CDZ_LOG_WARN = 3,
    CDZ_LOG_ERROR = 4
} cdz_log_level;

/* ------------------------------------------------------------------------ */
/* Parameter schema                                                          */

typedef enum cdz_param_type {
    CDZ_PARAM_BOOL = 1,
    CDZ_PARAM_INT = 2,
    CDZ_PARAM_FLOAT = 3,   /* an integer literal is accepted too */
    CDZ_PARAM_STRING = 4,
    CDZ_PARAM_PATH = 5,    /* a file that must exist; relative to the pipeline file */
    CDZ_PARAM_INT_ARRAY = 6,
    CDZ_PARAM_FLOAT_ARRAY = 7,
    CDZ_PARAM_STRING_ARRAY = 8
} cdz_param_type;

typedef struct cdz_param_spec {
    const char* name;
    cdz_param_type type;
    /* The default as a TOML literal ("0.4", "\"en-us\"", "[2, 3]"), or NULL
     * when the parameter is required. */
    const char* default_value;
    /* Inclusive bounds for numbers and for the elements of numeric arrays. */
    int has_range;
    double min_value;
    double max_value;
    /* NULL-terminated list of the allowed values of a STRING, or NULL. */
    const char* const* choices;
    const char* doc; /* one line */
} cdz_param_spec;

/* ------------------------------------------------------------------------ */
/* Host services                                                             */

typedef struct cdz_params cdz_params; /* a validated parameter table */
typedef struct cdz_rng cdz_rng;       /* a seeded random stream */

typedef struct cdz_sampling {
    uint32_t struct_size;
    double temperature; /* 0: greedy, the distribution is one-hot at the argmax */
    int64_t top_k;      /* 0: off */
    double top_p;       /* 1: off */
    /* Tokens the synthesis may emit: [allowed_begin, allowed_end) (the
     * backbone's audio range) and allowed_extra (its end token; -1: none).
     * Every other token gets no mass. allowed_end = 0: no restriction. */
    int64_t allowed_begin;
    int64_t allowed_end;
    int64_t allowed_extra;
} cdz_sampling;

typedef struct cdz_host_api {
    uint32_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;

    cdz_status* (*status_create)(cdz_status_code code, const char* message);

    void (*log)(cdz_log_level level, const char* plugin_name, const char* message);
    int (*log_enabled)(cdz_log_level level);

    /* Parameters after validation: defaults are filled in, types and ranges
     * checked, PATH values made absolute. Asking for a key that is not in the
     * plugin's schema, or with another type, is an error. Strings and arrays
     * stay valid as long as the cdz_params. */
    cdz_status* (*params_get_bool)(const cdz_params* params, const char* key, int* out);
    cdz_status* (*params_get_int)(const cdz_params* params, const char* key, int64_t* out);
    cdz_status* (*params_get_float)(const cdz_params* params, const char* key, double* out);
    cdz_status* (*params_get_string)(const cdz_params* params, const char* key, const char** out);
    cdz_status* (*params_get_int_array)(const cdz_params* params, const char* key,
                                        const int64_t** data, size_t* count);
    cdz_status* (*params_get_float_array)(const cdz_params* params, const char* key,
                                          const double** data, size_t* count);
    cdz_status* (*params_get_string_array)(const cdz_params* params, const char* key,
                                           const char* const** data, size_t* count);

    /* The random stream is xoshiro256** seeded through splitmix64: the same
     * numbers on every platform for one seed. */
    uint64_t (*rng_next_u64)(cdz_rng* rng);
    double (*rng_uniform)(cdz_rng* rng); /* [0, 1), 53 random bits */

    /* Turns logits into probabilities with temperature, top-k and top-p,
     * the same way for target and draft distributions. */
    cdz_status* (*sampling_probabilities)(const cdz_sampling* sampling, const float* logits,
                                          float* probabilities, int64_t count);
    /* Draws an index from probabilities that sum to 1 (within rounding). */
    int64_t (*sample_index)(cdz_rng* rng, const float* probabilities, int64_t count);

    /* A zero-filled CPU tensor whose deleter frees it; NULL if out of memory. */
    DLManagedTensor* (*tensor_create_cpu)(DLDataType dtype, const int64_t* shape, int32_t ndim);

    /* For a plugin that handles a status the host gave it (from params_get_*)
     * instead of returning it: its code and message, and its release. */
    cdz_status_code (*status_code)(const cdz_status* status);
    const char* (*status_message)(const cdz_status* status);
    void (*status_release)(cdz_status* status);

    /* sampling_probabilities' top-k and top-p on a
     * distribution that is already tempered (a drafter's product of factor
     * distributions, say): the allowed tokens' probabilities in place, the
     * others 0, the kept ones renormalized. In linear time, keeping exactly
     * the tokens a sort would keep. */
    cdz_status* (*sampling_nucleus)(const cdz_sampling* sampling, float* probabilities, int64_t count);
} cdz_host_api;

/* What every instance of every kind is created from. */
typedef struct cdz_instance_args {
    uint32_t struct_size;
    const cdz_host_api* host;
    const cdz_params* params;
    cdz_rng* rng;              /* owned by the host; reseeded at each synthesis */
    const char* device;        /* "cpu" or "cuda:N", from the pipeline */
    const char* stage;         /* the pipeline table, e.g. "acceptor" */
} cdz_instance_args;

/* Every kind's table begins with these three members, in this order. */
typedef struct cdz_instance_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);
} cdz_instance_vtable;

/* ------------------------------------------------------------------------ */
/* Token trees                                                               */

/* Draft tokens as a tree. A chain is a tree whose nodes each have one child.
 * parents[i] < i (nodes are in topological order); -1 marks a child of the
 * committed prefix. A node's position is prefix length + depth, and in
 * verification it attends to the prefix and to its own ancestors only. */
typedef struct cdz_token_tree {
    uint32_t struct_size;
    int32_t node_count;
    int32_t tokens_per_node;  /* codebooks per step; 1 for single-codebook */
    const int32_t* tokens;    /* [node_count * tokens_per_node] */
    const int32_t* parents;   /* [node_count] */
} cdz_token_tree;

/* ------------------------------------------------------------------------ */
/* Kind: frontend                                                            */

typedef struct cdz_frontend_info {
    uint32_t struct_size;
    int64_t vocab_size;
    int32_t bos_id; /* -1: none */
    int32_t eos_id; /* -1: none */
    int32_t pad_id; /* -1: none */
} cdz_frontend_info;

typedef struct cdz_frontend_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);

    cdz_status* (*get_info)(void* ctx, cdz_frontend_info* out);
    /* UTF-8 text to token ids: int32 tensor of shape [n]. */
    cdz_status* (*encode)(void* ctx, const char* utf8_text, DLManagedTensor** out_ids);
    /* The symbol of an id, for display; valid as long as ctx. */
    cdz_status* (*token_symbol)(void* ctx, int32_t id, const char** out_symbol);
} cdz_frontend_vtable;

/* ------------------------------------------------------------------------ */
/* Kind: codec                                                               */

typedef struct cdz_codec_info {
    uint32_t struct_size;
    uint32_t sample_rate;     /* Hz */
    double frame_rate;        /* token frames per second */
    uint32_t codebook_count;
    uint32_t codebook_size;
    int can_encode;
    int can_decode;
    int can_stream;           /* stream_* functions decode chunk by chunk */
} cdz_codec_info;

typedef struct cdz_codec_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);

    cdz_status* (*get_info)(void* ctx, cdz_codec_info* out);
    /* float32 mono audio [samples] at sample_rate -> int32 codes [codebooks, frames] */
    cdz_status* (*encode)(void* ctx, const DLTensor* audio, DLManagedTensor** out_codes);
    /* int32 codes [codebooks, frames] -> float32 audio [samples] */
    cdz_status* (*decode)(void* ctx, const DLTensor* codes, DLManagedTensor** out_audio);

    cdz_status* (*stream_create)(void* ctx, void** out_stream);
    /* Decodes the next frames; is_last flushes. out_audio may hold 0 samples. */
    cdz_status* (*stream_decode)(void* stream, const DLTensor* codes, int is_last,
                                 DLManagedTensor** out_audio);
    void (*stream_destroy)(void* stream);
} cdz_codec_vtable;

/* ------------------------------------------------------------------------ */
/* Kind: backbone                                                            */

typedef struct cdz_backbone_info {
    uint32_t struct_size;
    int64_t vocab_size;
    int64_t hidden_size;
    int64_t max_sequence_length;
    int32_t tokens_per_node;
    /* How the vocabulary is laid out: frontend id i is backbone id
     * text_token_offset + i, codec code c is audio_token_offset + c. */
    int64_t text_token_offset;
    int64_t text_token_count;
    int64_t audio_token_offset;
    int64_t audio_token_count;
    int32_t audio_start_token; /* placed after the text; -1: none */
    int32_t end_token;         /* ends the audio; -1: none */
    int64_t weight_bytes;      /* parameters' size, for bandwidth figures; 0: unknown */
    /* Nonzero: the backbone also emits text ids among the
     * audio tokens (phone markers: the phone spoken next); they carry no
     * audio and the engine passes over them. */
    int32_t phone_markers;
} cdz_backbone_info;

typedef struct cdz_backbone_output {
    uint32_t struct_size;
    /* float32 [node_count - logits_from, vocab]: next-token logits after
     * each node from logits_from on (the host also accepts all node_count
     * rows and skips the first logits_from). The host owns the tensor and
     * may overwrite it. */
    DLManagedTensor* logits;
    /* float32 [node_count, hidden]: last hidden states, when asked for. */
    DLManagedTensor* hidden;
    /* Set by the host before the call: the first node
     * whose logits anyone reads (0: all; node_count: none, and logits may
     * then be NULL). A backbone skips the output head for the nodes before
     * it: a prompt's prefill or a pass whose logits nobody verifies. */
    int32_t logits_from;
} cdz_backbone_output;

typedef struct cdz_backbone_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);

    cdz_status* (*get_info)(void* ctx, cdz_backbone_info* out);

    /* A session owns a KV cache of `capacity` positions. */
    cdz_status* (*session_create)(void* ctx, int64_t capacity, void** out_session);
    void (*session_destroy)(void* session);

    /* Evaluates every node of the tree after the committed prefix in one
     * pass. The nodes stay pending until session_commit; another forward
     * before that replaces them. */
    cdz_status* (*session_forward)(void* session, const cdz_token_tree* tree, int want_hidden,
                                   cdz_backbone_output* out);
    /* Keeps the given nodes of the last forward (a root-to-leaf path, in
     * order) as committed, drops the other pending nodes and compacts the
     * KV cache to the path without recomputing it. */
    cdz_status* (*session_commit)(void* session, const int32_t* path, int32_t path_length);
    /* Truncates the committed prefix to `length` positions. */
    cdz_status* (*session_rewind)(void* session, int64_t length);
    cdz_status* (*session_length)(void* session, int64_t* out_length);
    /* Added in 1.2; NULL when the backbone has none. The keys (rotary
     * embedding applied, as its attention reads them) and the values of the
     * committed positions [0, count) of every layer, each float32 [layers,
     * kv_heads, count, head_dim]; the backbone's deleter frees them. For a
     * drafter of the target's own shape (cdz_drafter_info.reads_target_cache). */
    cdz_status* (*session_read_cache)(void* session, int64_t count, DLManagedTensor** out_keys,
                                      DLManagedTensor** out_values);
} cdz_backbone_vtable;

/* ------------------------------------------------------------------------ */
/* Kind: drafter                                                             */

typedef struct cdz_drafter_info {
    uint32_t struct_size;
    int32_t max_nodes;         /* the largest tree it proposes */
    int32_t max_depth;
    int needs_target_hidden;   /* heads on the target's last hidden state */
    /* Added in 1.2. Nonzero: the drafter's cache can start from the target's
     * keys and values (cdz_draft_input.target_keys), so that it need not
     * evaluate the prompt itself: a draft of the target's own layers and
     * shapes (the target at a lower precision). 0, the default: the host
     * never hands them. */
    int reads_target_cache;
} cdz_drafter_info;

typedef struct cdz_draft_input {
    uint32_t struct_size;
    /* The whole sequence so far, prompt included; the drafts continue it.
     * Its last token has not been evaluated by the target yet (it is the
     * root of the next verification). A drafter with its own cache keeps
     * the part that still matches and drops the rest. */
    const int32_t* tokens;
    int64_t token_count;
    /* float32 [hidden]: the target's last hidden state at
     * tokens[target_hidden_position]: token_count - 2 (the position that
     * predicted the last token) when an acceptor verifies the drafts,
     * token_count - 1 when it does not. NULL when the drafter did not ask
     * for it or none exists yet (a one-token prompt). */
    const DLTensor* target_hidden;
    int64_t target_hidden_position;
    const cdz_sampling* sampling;
    /* What became of this session's previous proposal.
     * Its tokens were tokens[0, previous_token_count); of its tree the
     * acceptor kept accepted_count nodes, accepted_nodes (root to leaf,
     * indices into that tree), which are now tokens[previous_token_count,
     * previous_token_count + accepted_count) and followed by the target's
     * token. previous_token_count = 0 (and accepted_count = 0) when the host
     * gives no account: a session's first proposal, or one the host makes
     * outside the decoding loop (cost measurements); the drafter then
     * compares sequences itself. accepted_count = 0 after an acceptor that
     * does not verify. Committed tokens never change, so a drafter with its
     * own cache keeps tokens[0, previous_token_count) and the accepted nodes
     * without comparing sequences. */
    int64_t previous_token_count;
    int32_t accepted_count;
    const int32_t* accepted_nodes;
    /* Added in 1.2, only for a drafter whose info set reads_target_cache, on
     * its session's first proposal in the decoding loop and when the
     * backbone has session_read_cache: the target's keys and values of
     * tokens[0, n), float32 [layers, kv_heads, n, head_dim] each (the
     * backbone's session_read_cache; n = token_count - 1, every token but the
     * last, which the target has not evaluated), valid until propose
     * returns. NULL otherwise: the drafter evaluates what its cache lacks. */
    const DLTensor* target_keys;
    const DLTensor* target_values;
} cdz_draft_input;

typedef struct cdz_draft_output {
    uint32_t struct_size;
    /* Arrays owned by the drafter, valid until its next call. */
    cdz_token_tree tree;
    /* float32 [node_count, vocab]: the distribution node i was drawn from,
     * after sampling_probabilities. NULL when the drafter wrote them into
     * lent_probabilities (below) instead. */
    DLManagedTensor* probabilities;
    /* Set by the host before the call: a buffer it lends
     * for the draft distributions and reuses at every step, so that a
     * drafter need not allocate [nodes, vocab] floats per proposal. Room for
     * lent_rows rows of lent_row_size floats (the backbone's vocabulary);
     * lent_rows >= the drafter's max_nodes. A drafter that writes row i
     * (node i's distribution) there sets probabilities = NULL and
     * wrote_lent_probabilities = 1. NULL / 0 when the host lends none. */
    float* lent_probabilities;
    int64_t lent_rows;
    int64_t lent_row_size;
    int32_t wrote_lent_probabilities;
} cdz_draft_output;

typedef struct cdz_drafter_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);

    cdz_status* (*get_info)(void* ctx, cdz_drafter_info* out);
    cdz_status* (*session_create)(void* ctx, int64_t capacity, void** out_session);
    void (*session_destroy)(void* session);
    cdz_status* (*propose)(void* session, const cdz_draft_input* in, cdz_draft_output* out);
} cdz_drafter_vtable;

/* ------------------------------------------------------------------------ */
/* Kind: acceptor                                                            */

typedef struct cdz_acceptor_info {
    uint32_t struct_size;
    /* Nonzero (the host's default): the acceptor verifies drafts against the
     * target's distributions. 0: it emits tokens without a verification
     * pass (Viterbi over MTP heads); target_probabilities is then NULL. */
    int verifies;
    int needs_draft_probabilities;
    /* Added in 1.1. Nonzero: the acceptor reads the target's rows through
     * cdz_accept_input.target_row whenever the host sets it, so the host may
     * compute only the rows a step reaches (a chain whose first node is
     * rejected needs row 0 alone). 0, the default: the host fills
     * target_probabilities with every row. */
    int reads_target_rows;
} cdz_acceptor_info;

typedef struct cdz_accept_input {
    uint32_t struct_size;
    const cdz_token_tree* tree;
    int64_t vocab_size;
    /* [node_count + 1, vocab]: row 0 is the target's distribution after the
     * committed prefix, row i + 1 its distribution after node i. */
    const float* target_probabilities;
    /* [node_count, vocab]: the distribution node i was drawn from. */
    const float* draft_probabilities;
    const cdz_sampling* sampling;
    /* The committed sequence the tree continues, prompt
     * included (the tree's roots are children of its last token). */
    const int32_t* sequence;
    int64_t sequence_length;
    /* Added in 1.1, only for an acceptor whose info set reads_target_rows:
     * when target_row is not NULL, target_probabilities is NULL and row r
     * (0 .. node_count, numbered as target_probabilities' rows) is
     * target_row(target_row_ctx, r), vocab_size floats valid until accept
     * returns; asking again for a row returns the same pointer at no cost.
     * NULL when the host could not compute the row: the acceptor then
     * returns an error status and the host reports its own reason. */
    const float* (*target_row)(void* ctx, int32_t row);
    void* target_row_ctx;
} cdz_accept_input;

typedef struct cdz_accept_output {
    uint32_t struct_size;
    /* Caller-allocated, room for accepted_capacity entries (>= node_count):
     * the accepted root-to-leaf path. */
    int32_t* accepted_nodes;
    int32_t accepted_count;
    /* Caller-allocated, room for emitted_capacity entries (>= (node_count +
     * 1) * tokens_per_node): what to append to the sequence, the accepted
     * nodes' tokens then the token the target contributes (the correction
     * or the bonus). */
    int32_t* emitted_tokens;
    int32_t emitted_count;
    /* Set by the host. An acceptor that would write more
     * returns an error instead. */
    int32_t accepted_capacity;
    int32_t emitted_capacity;
    /* Added in 1.3. Caller-allocated, room for emitted_capacity entries, each
     * -1 when accept is called: what the codec decodes for an emitted token,
     * where the acceptor lets an accepted node's token stand for a group of
     * similar codes and the audio takes another member of it (acceptor.pcg's
     * `group_code = "target"`). An entry left at -1 is the emitted token. The
     * sequence, the caches and every later proposal keep emitted_tokens; an
     * audio token must be an audio code where the emitted one is, and the
     * emitted token itself everywhere else. */
    int32_t* audio_tokens;
} cdz_accept_output;

typedef struct cdz_acceptor_vtable {
    uint32_t struct_size;
    cdz_status* (*create)(const cdz_instance_args* args, void** out_ctx);
    void (*destroy)(void* ctx);

    cdz_status* (*get_info)(void* ctx, cdz_acceptor_info* out);
    /* Stateless acceptance: what session_accept does for an acceptor
     * without sessions. */
    cdz_status* (*accept)(void* ctx, const cdz_accept_input* in, cdz_accept_output* out);

    /* Optional: per-synthesis state (all five set, or all
     * NULL). The host creates a session for each synthesis, calls
     * session_reset with the prompt (the sequence before the first step),
     * then at each step session_accept instead of accept, and
     * session_commit with the tokens it appended to the sequence after the
     * step (the emitted tokens), as llama.cpp's samplers get reset and
     * accept. session_reset may be called again to reuse the session. */
    cdz_status* (*session_create)(void* ctx, void** out_session);
    void (*session_destroy)(void* session);
    cdz_status* (*session_reset)(void* session, const int32_t* tokens, int64_t count);
    cdz_status* (*session_accept)(void* session, const cdz_accept_input* in, cdz_accept_output* out);
    cdz_status* (*session_commit)(void* session, const int32_t* tokens, int64_t count);
} cdz_acceptor_vtable;

/* ------------------------------------------------------------------------ */
/* Descriptors and the entry point                                           */

typedef struct cdz_plugin_descriptor {
    uint32_t struct_size;
    uint32_t abi_major;        /* CDZ_PLUGIN_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;        /* CDZ_PLUGIN_ABI_MINOR the plugin was built with */
    const char* name;          /* "<kind>.<name>", e.g. "acceptor.bias" */
    cdz_plugin_kind kind;
    const char* version;       /* the plugin's own version, e.g. "1.0.0" */
    const char* summary;       /* one line */
    const cdz_param_spec* params;
    uint32_t param_count;
    uint32_t param_spec_size;  /* sizeof(cdz_param_spec) as the plugin saw it */
    /* cdz_frontend_vtable*, cdz_codec_vtable*, ... according to kind. */
    const void* vtable;
} cdz_plugin_descriptor;

typedef struct cdz_plugin_list {
    uint32_t struct_size;
    const cdz_plugin_descriptor* const* descriptors;
    uint32_t count;
} cdz_plugin_list;

/* Called once per library. `host` lives as long as the process; the plugin
 * may keep it. The descriptors must stay valid while the library is loaded. */
typedef cdz_status* (*cdz_plugin_entry_fn)(const cdz_host_api* host, cdz_plugin_list* out);

/* Each plugin library defines this function. */
CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out);

#ifdef __cplusplus
}
#endif

#endif /* CADENZA_PLUGIN_H */
