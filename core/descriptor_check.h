// Checks what a plugin library's entry point returned before the host uses
// it: struct sizes, ABI version, name, kind, vtable and parameter schema.
#pragma once

#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza {

enum class DescriptorParts {
    with_function_table,     // from a loaded library's entry point
    without_function_table,  // from a manifest (plugin_manifest.h): vtable is NULL
};

// Throws cadenza::Error naming `library` and the plugin on any problem.
void check_descriptor(const cdz_plugin_descriptor* descriptor, const std::string& library,
                      DescriptorParts parts = DescriptorParts::with_function_table);

// The descriptor's parameter specs, read with the stride the plugin declared.
std::vector<cdz_param_spec> descriptor_parameter_specs(const cdz_plugin_descriptor& descriptor);

}  // namespace cadenza
