// test.row_reading_acceptor: a test double of an acceptor that reads the
// target's rows on demand (plugin ABI 1.1: reads_target_rows). It fails a
// step whose input still carries target_probabilities or lacks target_row, so
// a synthesis through it checks that the host lends rows instead of filling
// them. It emits row 0's most probable token (greedy decoding, as
// test.session_acceptor) and accepts no draft; with `extra_row` >= 0 it also
// asks for that row at every step, to show what the host does with a row
// outside the step; with `audio_token` >= 0 it names that token as the audio
// of every token it emits from `audio_from` on (plugin ABI 1.3:
// audio_tokens), to show what the host does with it.
#include <algorithm>
#include <string>
#include <utility>

#include "cadenza/plugin.h"

namespace {

const cdz_host_api* host = nullptr;

const cdz_param_spec params[] = {
    {"extra_row", CDZ_PARAM_INT, "-1", 1, -1, 1e6, nullptr, "a row to ask for at every step beside row 0; -1: none"},
    {"audio_token", CDZ_PARAM_INT, "-1", 1, -1, 1e6, nullptr, "the audio token of every emitted token; -1: none"},
    {"audio_from", CDZ_PARAM_INT, "0", 1, 0, 1e6, nullptr, "the emitted tokens audio_token stands for: these and above"},
};

struct Acceptor {
    int64_t extra_row = -1;
    int64_t audio_token = -1;
    int64_t audio_from = 0;
};

cdz_status* fail(const std::string& message) {
    return host->status_create(CDZ_STATUS_INTERNAL, ("test.row_reading_acceptor: " + message).c_str());
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    auto* acceptor = new Acceptor;
    const std::pair<const char*, int64_t*> values[] = {
        {"extra_row", &acceptor->extra_row}, {"audio_token", &acceptor->audio_token}, {"audio_from", &acceptor->audio_from}};
    for (auto [name, value] : values)
        if (cdz_status* status = host->params_get_int(args->params, name, value)) {
            delete acceptor;
            return status;
        }
    *out_ctx = acceptor;
    return nullptr;
}

void destroy(void* ctx) { delete static_cast<Acceptor*>(ctx); }

cdz_status* get_info(void*, cdz_acceptor_info* out) {
    out->verifies = 1;
    out->needs_draft_probabilities = 0;
    out->reads_target_rows = 1;
    return nullptr;
}

cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    const auto& acceptor = *static_cast<const Acceptor*>(ctx);
    if (in->target_probabilities || !in->target_row)
        return fail("the host filled target_probabilities instead of lending rows through target_row");
    const float* row = in->target_row(in->target_row_ctx, 0);
    if (!row) return fail("no row 0");
    if (in->target_row(in->target_row_ctx, 0) != row) return fail("row 0 moved when asked for again");
    if (acceptor.extra_row >= 0 && !in->target_row(in->target_row_ctx, static_cast<int32_t>(acceptor.extra_row)))
        return fail("no row " + std::to_string(acceptor.extra_row));
    out->accepted_count = 0;
    out->emitted_tokens[0] = static_cast<int32_t>(std::max_element(row, row + in->vocab_size) - row);
    out->emitted_count = 1;
    if (acceptor.audio_token >= 0 && out->emitted_tokens[0] >= acceptor.audio_from)
        out->audio_tokens[0] = static_cast<int32_t>(acceptor.audio_token);
    return nullptr;
}

const cdz_acceptor_vtable vtable = {
    sizeof(cdz_acceptor_vtable), create, destroy, get_info, accept, nullptr, nullptr, nullptr, nullptr, nullptr,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "test.row_reading_acceptor",
    CDZ_PLUGIN_KIND_ACCEPTOR, "1.0.0", "test double: greedy acceptance reading the target's rows on demand",
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
