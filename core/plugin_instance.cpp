#include "plugin_instance.h"

#include "host_api.h"
#include "status_object.h"

namespace cadenza {

PluginInstance::PluginInstance(const StageConfig& stage, const std::string& device, uint64_t seed)
    : stage_(stage), descriptor_(stage.plugin.loaded()), name_(stage.plugin.descriptor->name), device_(device) {
    reseed(seed);
    cdz_instance_args args{};
    args.struct_size = sizeof(args);
    args.host = host_api();
    args.params = stage_.params.get();
    args.rng = &rng_;
    args.device = device_.c_str();
    args.stage = stage_.table.c_str();
    const auto& table = vtable<cdz_instance_vtable>();
    cdz_status* status = nullptr;
    try {
        status = table.create(&args, &context_);
    } catch (...) {
        throw Error(CDZ_STATUS_INTERNAL, "[" + stage_.table + "] " + name_ + ": create let an exception escape");
    }
    throw_if_error(status, "[" + stage_.table + "] " + name_);
}

PluginInstance::~PluginInstance() {
    if (context_) vtable<cdz_instance_vtable>().destroy(context_);
}

void PluginInstance::reseed(uint64_t seed) { random_stream_seed(rng_, derive_stream_seed(seed, stage_.table.c_str())); }

}  // namespace cadenza
