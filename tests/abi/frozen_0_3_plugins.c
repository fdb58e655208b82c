/* Two plugins as a third party built them against plugin ABI 0.3, compiled
 * with the frozen copy of that version's headers (tests/abi/frozen-0.3/):
 *   frozen.letters  a frontend: 'a'..'z' -> 1..26, ' ' -> 27, the rest skipped
 *   frozen.greedy   an acceptor that never keeps a draft and emits the most
 *                   probable token of row 0 (plain greedy decoding)
 * Their descriptors and tables are 0.3's, smaller than a newer host's: the
 * host must load and run them (docs/abi.md, versioning). This file is never
 * edited to follow the current headers; a new frozen version gets its own. */
#include <stddef.h>
#include <stdint.h>

#include "cadenza/plugin.h"

#if CDZ_PLUGIN_ABI_MAJOR != 0 || CDZ_PLUGIN_ABI_MINOR != 3
#error "built against the frozen 0.3 headers only"
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

static const cdz_frontend_vtable letters_vtable = {sizeof(cdz_frontend_vtable), create, destroy, letters_info,
                                                   letters_encode, letters_symbol};

/* frozen.greedy */

static cdz_status* greedy_info(void* ctx, cdz_acceptor_info* out) {
    (void)ctx;
    out->needs_target = 1;
    out->needs_draft_probabilities = 0;
    return NULL;
}

static cdz_status* greedy_accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    const float* row = in->target_probabilities;
    int64_t best = 0, i;
    (void)ctx;
    if (!row) return host->status_create(CDZ_STATUS_INVALID_ARGUMENT, "frozen.greedy: no target probabilities");
    for (i = 1; i < in->vocab_size; ++i)
        if (row[i] > row[best]) best = i;
    out->accepted_count = 0;
    out->emitted_tokens[0] = (int32_t)best;
    out->emitted_count = 1;
    return NULL;
}

static const cdz_acceptor_vtable greedy_vtable = {sizeof(cdz_acceptor_vtable), create, destroy, greedy_info,
                                                  greedy_accept};

static const cdz_plugin_descriptor letters = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "frozen.letters",
    CDZ_PLUGIN_KIND_FRONTEND, "0.3.0", "letters to ids, built against plugin ABI 0.3", NULL, 0,
    sizeof(cdz_param_spec), &letters_vtable};
static const cdz_plugin_descriptor greedy = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "frozen.greedy",
    CDZ_PLUGIN_KIND_ACCEPTOR, "0.3.0", "greedy decoding, built against plugin ABI 0.3", NULL, 0,
    sizeof(cdz_param_spec), &greedy_vtable};
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
