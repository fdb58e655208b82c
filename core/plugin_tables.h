// The host's own copy of what a plugin's entry point returned: its
// descriptor and function table copied into structs of this host's size,
// every field beyond the plugin's struct_size zero (each appended field's
// documented default: a NULL function is one the plugin does not have).
// The host reads only these copies, so that a plugin built against an older
// minor, whose structs are shorter, is never read past their end.
#pragma once

#include "cadenza/plugin.h"

namespace cadenza {

class PluginTables {
public:
    // `descriptor` must have passed check_descriptor.
    explicit PluginTables(const cdz_plugin_descriptor& descriptor);
    PluginTables(const PluginTables&) = delete;
    PluginTables& operator=(const PluginTables&) = delete;

    // Its vtable points into this object; struct sizes are the plugin's.
    const cdz_plugin_descriptor& descriptor() const { return descriptor_; }

private:
    union Vtable {
        cdz_instance_vtable instance;
        cdz_frontend_vtable frontend;
        cdz_codec_vtable codec;
        cdz_backbone_vtable backbone;
        cdz_drafter_vtable drafter;
        cdz_acceptor_vtable acceptor;
    };
    cdz_plugin_descriptor descriptor_{};
    Vtable vtable_{};
};

}  // namespace cadenza
