#include "plugins_command.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <iostream>
#include <memory>

#include "descriptor_check.h"
#include "exit_codes.h"
#include "parameter_values.h"
#include "plugin_catalog.h"
#include "plugin_library.h"
#include "plugin_manifest.h"
#include "error.h"

namespace cadenza::cli {
namespace {

std::string range_text(const cdz_param_spec& spec) {
    std::ostringstream out;
    if (spec.has_range) out << "[" << spec.min_value << ", " << spec.max_value << "]";
    if (spec.choices) {
        out << "{";
        for (const char* const* choice = spec.choices; *choice; ++choice)
            out << (choice == spec.choices ? "" : ", ") << *choice;
        out << "}";
    }
    return out.str();
}

}  // namespace

int list_plugins() {
    const PluginCatalog catalog = PluginCatalog::scan(plugin_search_path());
    std::cout << std::left << std::setw(26) << "NAME" << std::setw(10) << "KIND" << std::setw(10) << "VERSION"
              << "LIBRARY\n";
    for (const auto& entry : catalog.entries()) {
        std::cout << std::setw(26) << entry.descriptor->name << std::setw(10) << plugin_kind_name(entry.descriptor->kind)
                  << std::setw(10) << entry.descriptor->version << entry.library.string();
        if (entry.shadowed) std::cout << "  (shadowed)";
        std::cout << '\n';
    }
    std::cout << catalog.entries().size() << " plugin(s); searched:";
    for (const auto& location : catalog.search_path())
        std::cout << ' ' << location.path.string() << " (" << location.origin << ")";
    std::cout << '\n';
    for (const auto& problem : catalog.problems()) std::cerr << "cadenza: error: " << problem << '\n';
    return catalog.problems().empty() ? exit_ok : exit_user_error;
}

int describe_plugin(const std::string& name) {
    const PluginCatalog catalog = PluginCatalog::scan(plugin_search_path());
    const CatalogEntry& entry = catalog.find(name);
    const cdz_plugin_descriptor& d = *entry.descriptor;
    std::cout << d.name << " " << d.version << " (" << plugin_kind_name(d.kind) << ", plugin ABI " << d.abi_major << "."
              << d.abi_minor << ")\n";
    if (d.summary) std::cout << d.summary << '\n';
    std::cout << "library: " << entry.library.string() << "\n\n";
    const auto specs = descriptor_parameter_specs(d);
    if (specs.empty()) {
        std::cout << "no parameters\n";
        return exit_ok;
    }
    // Columns as wide as their widest entry.
    size_t name_width = 10, default_width = 12, range_width = 6;
    for (const auto& spec : specs) {
        name_width = std::max(name_width, std::strlen(spec.name) + 2);
        default_width = std::max(default_width, std::strlen(spec.default_value ? spec.default_value : "(required)") + 2);
        range_width = std::max(range_width, range_text(spec).size() + 2);
    }
    std::cout << std::left << std::setw(static_cast<int>(name_width)) << "PARAMETER" << std::setw(14) << "TYPE"
              << std::setw(static_cast<int>(default_width)) << "DEFAULT" << std::setw(static_cast<int>(range_width))
              << "RANGE" << "DESCRIPTION\n";
    for (const auto& spec : specs) {
        std::cout << std::setw(static_cast<int>(name_width)) << spec.name << std::setw(14) << param_type_name(spec.type)
                  << std::setw(static_cast<int>(default_width)) << (spec.default_value ? spec.default_value : "(required)")
                  << std::setw(static_cast<int>(range_width)) << range_text(spec) << (spec.doc ? spec.doc : "") << '\n';
    }
    return exit_ok;
}

int write_manifest(const std::string& library, const std::string& output) {
    const std::string text = write_plugin_manifest(PluginLibrary::load(library).descriptors());
    if (output.empty()) {
        std::cout << text;
        return exit_ok;
    }
    std::ofstream out(output, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw Error(CDZ_STATUS_IO_ERROR, output + ": cannot write the manifest");
    return exit_ok;
}

Command add_plugins_command(CLI::App& app) {
    auto* plugins = app.add_subcommand("plugins", "list every plugin found along the search path");
    auto* describe = plugins->add_subcommand("describe", "print a plugin's parameter schema");
    auto name = std::make_shared<std::string>();
    describe->add_option("name", *name, "plugin name, e.g. frontend.chars")->required();
    auto* manifest = plugins->add_subcommand(
        "manifest", "print the manifest of a plugin library (what its entry point returns, without function tables); "
                    "cadenza_add_plugin puts it in the library's .cadenza_plugins section");
    auto library = std::make_shared<std::string>();
    auto output = std::make_shared<std::string>();
    manifest->add_option("library", *library, "a plugin library (.so)")->required();
    manifest->add_option("-o,--output", *output, "write it to this file instead of standard output");
    return {plugins, [describe, name, manifest, library, output] {
                if (describe->parsed()) return describe_plugin(*name);
                if (manifest->parsed()) return write_manifest(*library, *output);
                return list_plugins();
            }};
}

}  // namespace cadenza::cli
