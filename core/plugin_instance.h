// One created plugin instance: its descriptor, its `void* ctx` and the
// destroy call that releases it.
#pragma once

#include <memory>
#include <string>

#include "cadenza/plugin.h"
#include "pipeline_config.h"
#include "random_stream.h"

namespace cadenza {

class PluginInstance {
public:
    // Creates the stage's plugin; throws cadenza::Error naming the stage.
    PluginInstance(const StageConfig& stage, const std::string& device, uint64_t seed);
    ~PluginInstance();
    PluginInstance(const PluginInstance&) = delete;
    PluginInstance& operator=(const PluginInstance&) = delete;

    const cdz_plugin_descriptor& descriptor() const { return descriptor_; }
    const std::string& name() const { return name_; }
    void* context() const { return context_; }
    template <typename Vtable>
    const Vtable& vtable() const { return *static_cast<const Vtable*>(descriptor().vtable); }

    // Restarts the instance's random stream, as at the start of a synthesis.
    void reseed(uint64_t seed);

private:
    StageConfig stage_;
    const cdz_plugin_descriptor& descriptor_;  // loaded, with its function table
    std::string name_;
    std::string device_;
    cdz_rng rng_{};
    void* context_ = nullptr;
};

}  // namespace cadenza
