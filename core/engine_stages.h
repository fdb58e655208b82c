// The engine's created stages and what they reported about themselves.
// Internal to the core: shared by the decoding loop, its logits processors
// and the cost probe.
#pragma once

#include <memory>

#include "cadenza/plugin.h"
#include "engine.h"
#include "logits_processor.h"
#include "plugin_instance.h"

namespace cadenza {

template <typename Info>
Info make_info() {
    Info info{};
    info.struct_size = sizeof(Info);
    return info;
}

// Releases a plugin session with its own destroy function.
class PluginSession {
public:
    PluginSession(void* session, void (*destroy)(void*)) : session_(session), destroy_(destroy) {}
    ~PluginSession() {
        if (session_) destroy_(session_);
    }
    PluginSession(const PluginSession&) = delete;
    PluginSession& operator=(const PluginSession&) = delete;
    void* get() const { return session_; }

private:
    void* session_;
    void (*destroy_)(void*);
};

struct EngineStages {
    std::unique_ptr<PluginInstance> frontend, codec, backbone, drafter, acceptor;
    cdz_frontend_info frontend_info = make_info<cdz_frontend_info>();
    cdz_codec_info codec_info = make_info<cdz_codec_info>();
    cdz_backbone_info backbone_info = make_info<cdz_backbone_info>();
    cdz_drafter_info drafter_info = make_info<cdz_drafter_info>();
    cdz_acceptor_info acceptor_info = make_info<cdz_acceptor_info>();
    cdz_rng sampling_rng{};
    // Last: its processors hold sessions of the plugins above.
    LogitsProcessorChain logits_processors;
};

}  // namespace cadenza
