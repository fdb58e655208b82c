#include "plugin_tables.h"

#include <algorithm>
#include <cstring>

namespace cadenza {
namespace {

size_t vtable_size(cdz_plugin_kind kind) {
    switch (kind) {
        case CDZ_PLUGIN_KIND_FRONTEND: return sizeof(cdz_frontend_vtable);
        case CDZ_PLUGIN_KIND_CODEC: return sizeof(cdz_codec_vtable);
        case CDZ_PLUGIN_KIND_BACKBONE: return sizeof(cdz_backbone_vtable);
        case CDZ_PLUGIN_KIND_DRAFTER: return sizeof(cdz_drafter_vtable);
        case CDZ_PLUGIN_KIND_ACCEPTOR: return sizeof(cdz_acceptor_vtable);
    }
    return 0;
}

}  // namespace

PluginTables::PluginTables(const cdz_plugin_descriptor& descriptor) {
    std::memset(static_cast<void*>(&descriptor_), 0, sizeof(descriptor_));
    std::memset(static_cast<void*>(&vtable_), 0, sizeof(vtable_));
    std::memcpy(&descriptor_, &descriptor, std::min<size_t>(descriptor.struct_size, sizeof(descriptor_)));
    const auto* table = static_cast<const cdz_instance_vtable*>(descriptor.vtable);
    std::memcpy(&vtable_, table, std::min<size_t>(table->struct_size, vtable_size(descriptor.kind)));
    descriptor_.vtable = &vtable_;
}

}  // namespace cadenza
