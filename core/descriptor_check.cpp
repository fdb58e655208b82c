#include "descriptor_check.h"

#include <cstring>
#include <regex>
#include <set>

#include "error.h"
#include "parameter_schema.h"
#include "plugin_library.h"

namespace cadenza {
namespace {

// Each struct as its first published version of this major (plugin ABI 1.0)
// ended: a plugin may send nothing shorter. Fields appended in later minors
// are read only where struct_size reaches them (plugin_tables.h copies a
// table into one of this host's size, the rest zero: each appended field's
// documented default). These sizes never change within a major.
constexpr size_t minimum_descriptor_size = CDZ_SIZE_THROUGH(cdz_plugin_descriptor, vtable);
constexpr size_t minimum_param_spec_size = CDZ_SIZE_THROUGH(cdz_param_spec, doc);

size_t minimum_vtable_size(cdz_plugin_kind kind) {
    switch (kind) {
        case CDZ_PLUGIN_KIND_FRONTEND: return CDZ_SIZE_THROUGH(cdz_frontend_vtable, token_symbol);
        case CDZ_PLUGIN_KIND_CODEC: return CDZ_SIZE_THROUGH(cdz_codec_vtable, stream_destroy);
        case CDZ_PLUGIN_KIND_BACKBONE: return CDZ_SIZE_THROUGH(cdz_backbone_vtable, session_length);
        case CDZ_PLUGIN_KIND_DRAFTER: return CDZ_SIZE_THROUGH(cdz_drafter_vtable, propose);
        case CDZ_PLUGIN_KIND_ACCEPTOR: return CDZ_SIZE_THROUGH(cdz_acceptor_vtable, session_commit);
    }
    return 0;
}

bool valid_param_type(cdz_param_type type) {
    return type >= CDZ_PARAM_BOOL && type <= CDZ_PARAM_STRING_ARRAY;
}

}  // namespace

std::vector<cdz_param_spec> descriptor_parameter_specs(const cdz_plugin_descriptor& descriptor) {
    std::vector<cdz_param_spec> specs(descriptor.param_count);
    const auto* bytes = reinterpret_cast<const unsigned char*>(descriptor.params);
    const size_t copied = std::min<size_t>(descriptor.param_spec_size, sizeof(cdz_param_spec));
    for (uint32_t i = 0; i < descriptor.param_count; ++i)
        std::memcpy(&specs[i], bytes + static_cast<size_t>(i) * descriptor.param_spec_size, copied);
    return specs;
}

void check_descriptor(const cdz_plugin_descriptor* descriptor, const std::string& library, DescriptorParts parts) {
    auto fail = [&](cdz_status_code code, const std::string& what) {
        const std::string who = descriptor && descriptor->name ? " plugin '" + std::string(descriptor->name) + "'" : "";
        throw Error(code, library + ":" + who + " " + what);
    };
    if (!descriptor) fail(CDZ_STATUS_INVALID_ARGUMENT, "a descriptor is NULL");
    if (descriptor->struct_size < minimum_descriptor_size)
        fail(CDZ_STATUS_ABI_MISMATCH, "descriptor is smaller than plugin ABI 1.0's (" +
                                          std::to_string(descriptor->struct_size) + " < " +
                                          std::to_string(minimum_descriptor_size) + " bytes)");
    if (descriptor->abi_major != CDZ_PLUGIN_ABI_MAJOR || descriptor->abi_minor > CDZ_PLUGIN_ABI_MINOR)
        fail(CDZ_STATUS_ABI_MISMATCH,
             "was built for plugin ABI " + std::to_string(descriptor->abi_major) + "." +
                 std::to_string(descriptor->abi_minor) + " but this host speaks " +
                 std::to_string(CDZ_PLUGIN_ABI_MAJOR) + "." + std::to_string(CDZ_PLUGIN_ABI_MINOR) +
                 " (same major and a minor no newer than the host's are required)");
    static const std::regex name_pattern("[a-z][a-z0-9_]*\\.[a-z0-9_][a-z0-9_.-]*");
    if (!descriptor->name || !std::regex_match(descriptor->name, name_pattern))
        fail(CDZ_STATUS_INVALID_ARGUMENT, "has an invalid name (expected '<group>.<name>' in lower case, e.g. 'acceptor.bias')");
    const size_t vtable_size = minimum_vtable_size(descriptor->kind);
    if (vtable_size == 0) fail(CDZ_STATUS_INVALID_ARGUMENT, "has an unknown kind " + std::to_string(descriptor->kind));
    if (!descriptor->version || !*descriptor->version) fail(CDZ_STATUS_INVALID_ARGUMENT, "has no version");
    if (parts == DescriptorParts::with_function_table) {
        const auto* vtable = static_cast<const cdz_instance_vtable*>(descriptor->vtable);
        if (!vtable) fail(CDZ_STATUS_INVALID_ARGUMENT, "has no function table");
        if (vtable->struct_size < vtable_size)
            fail(CDZ_STATUS_ABI_MISMATCH, std::string("has a ") + plugin_kind_name(descriptor->kind) +
                                              " table smaller than plugin ABI 1.0's (" +
                                              std::to_string(vtable->struct_size) + " < " +
                                              std::to_string(vtable_size) + " bytes)");
        if (!vtable->create || !vtable->destroy)
            fail(CDZ_STATUS_INVALID_ARGUMENT, "has no create or destroy function");
    }
    if (descriptor->param_count > 0 && !descriptor->params) fail(CDZ_STATUS_INVALID_ARGUMENT, "has no parameter array");
    if (descriptor->param_count > 0 && descriptor->param_spec_size < minimum_param_spec_size)
        fail(CDZ_STATUS_ABI_MISMATCH, "declares parameter specs smaller than plugin ABI 1.0's");

    std::set<std::string> names;
    for (const cdz_param_spec& spec : descriptor_parameter_specs(*descriptor)) {
        if (!spec.name || !*spec.name) fail(CDZ_STATUS_INVALID_ARGUMENT, "has a parameter without a name");
        const std::string name = spec.name;
        if (name == "plugin") fail(CDZ_STATUS_INVALID_ARGUMENT, "may not declare a parameter named 'plugin'");
        if (!names.insert(name).second) fail(CDZ_STATUS_INVALID_ARGUMENT, "declares parameter '" + name + "' twice");
        if (!valid_param_type(spec.type)) fail(CDZ_STATUS_INVALID_ARGUMENT, "parameter '" + name + "' has an unknown type");
        if (spec.has_range && !(spec.min_value <= spec.max_value))
            fail(CDZ_STATUS_INVALID_ARGUMENT, "parameter '" + name + "' has an empty range");
        if (spec.default_value) {
            try {
                parse_default_value(spec);
            } catch (const Error& e) {
                fail(CDZ_STATUS_INVALID_ARGUMENT, e.what());
            }
        }
    }
}

}  // namespace cadenza
