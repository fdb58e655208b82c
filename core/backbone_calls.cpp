#include "backbone_calls.h"

#include "error.h"
#include "status_object.h"

namespace cadenza {

std::unique_ptr<PluginSession> create_session(const PluginInstance& instance,
                                              cdz_status* (*create)(void*, int64_t, void**), void (*destroy)(void*),
                                              int64_t capacity) {
    void* session = nullptr;
    throw_if_error(create(instance.context(), capacity, &session), instance.name() + ": session_create");
    return std::make_unique<PluginSession>(session, destroy);
}

float* logits_from(ManagedTensor& logits, int64_t nodes, int64_t from, int64_t vocab, const std::string& what) {
    const auto shape = logits.expect(kDLFloat, 32, 2, what);
    if (shape[1] != vocab || (shape[0] != nodes - from && shape[0] != nodes))
        throw Error(CDZ_STATUS_INTERNAL, what + " have the wrong shape");
    return logits.mutable_data<float>() + (shape[0] == nodes ? from : 0) * vocab;
}

}  // namespace cadenza
