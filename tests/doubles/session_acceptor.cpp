// test.session_acceptor: a test double of an acceptor with per-synthesis
// sessions. It keeps the sequence the host told it of (session_reset's
// prompt, then every session_commit) and fails a step whose input sequence
// differs, so that any synthesis through it checks the host's side of the
// session protocol. It keeps no draft and emits row 0's most probable token
// (greedy decoding); its stateless accept() is an error, since a host that
// knows sessions must call session_accept.
#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace {

const cdz_host_api* host = nullptr;

struct Session {
    std::vector<int32_t> sequence;
    int64_t steps = 0;
};

cdz_status* fail(const std::string& message) {
    return host->status_create(CDZ_STATUS_INTERNAL, ("test.session_acceptor: " + message).c_str());
}

cdz_status* create(const cdz_instance_args*, void** out_ctx) {
    *out_ctx = &host;
    return nullptr;
}
void destroy(void*) {}

cdz_status* get_info(void*, cdz_acceptor_info* out) {
    out->verifies = 1;
    out->needs_draft_probabilities = 0;
    return nullptr;
}

cdz_status* accept(void*, const cdz_accept_input*, cdz_accept_output*) {
    return fail("accept() was called although the acceptor has sessions");
}

cdz_status* session_create(void*, void** out_session) {
    *out_session = new (std::nothrow) Session{};
    return *out_session ? nullptr : fail("out of memory");
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

cdz_status* session_reset(void* raw, const int32_t* tokens, int64_t count) {
    auto& session = *static_cast<Session*>(raw);
    if (count < 1 || !tokens) return fail("session_reset without the prompt");
    session.sequence.assign(tokens, tokens + count);
    session.steps = 0;
    return nullptr;
}

cdz_status* session_accept(void* raw, const cdz_accept_input* in, cdz_accept_output* out) {
    auto& session = *static_cast<Session*>(raw);
    if (in->sequence_length != static_cast<int64_t>(session.sequence.size()) ||
        !std::equal(session.sequence.begin(), session.sequence.end(), in->sequence))
        return fail("step " + std::to_string(session.steps) + ": the input's sequence (" +
                    std::to_string(in->sequence_length) + " tokens) is not the one reset and commit told of (" +
                    std::to_string(session.sequence.size()) + ")");
    if (out->emitted_capacity < 1) return fail("no room for a token");
    const float* row = in->target_probabilities;
    out->accepted_count = 0;
    out->emitted_tokens[0] = static_cast<int32_t>(std::max_element(row, row + in->vocab_size) - row);
    out->emitted_count = 1;
    ++session.steps;
    return nullptr;
}

cdz_status* session_commit(void* raw, const int32_t* tokens, int64_t count) {
    auto& session = *static_cast<Session*>(raw);
    session.sequence.insert(session.sequence.end(), tokens, tokens + count);
    return nullptr;
}

const cdz_acceptor_vtable vtable = {
    sizeof(cdz_acceptor_vtable), create,         destroy,        get_info,      accept,
    session_create,              session_destroy, session_reset, session_accept, session_commit,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, "test.session_acceptor",
    CDZ_PLUGIN_KIND_ACCEPTOR, "1.0.0", "test double: greedy acceptance that checks the host's session calls",
    nullptr, 0, sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    host = host_api;
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}
