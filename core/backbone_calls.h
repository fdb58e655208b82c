// The calls the decoding loop and the processors that run their own
// backbone session (classifier-free guidance) both make.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine_stages.h"
#include "managed_tensor.h"

namespace cadenza {

// A new session of `instance` (a backbone or a drafter) holding `capacity`
// tokens; throws cadenza::Error naming the instance.
std::unique_ptr<PluginSession> create_session(const PluginInstance& instance,
                                              cdz_status* (*create)(void*, int64_t, void**), void (*destroy)(void*),
                                              int64_t capacity);

// The logits a backbone returned for a pass of `nodes` nodes of which rows
// [from, nodes) were asked for: the first of those rows. A backbone may
// also return every row (plugin.h).
float* logits_from(ManagedTensor& logits, int64_t nodes, int64_t from, int64_t vocab, const std::string& what);

}  // namespace cadenza
