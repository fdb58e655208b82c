// One plugin library, loaded with Boost.DLL and kept loaded for the life of
// the process, with the descriptors its entry point returned.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "cadenza/plugin.h"
#include "plugin_manifest.h"
#include "plugin_tables.h"

namespace cadenza {

class PluginLibrary {
public:
    // Loads `path` once per process (later calls return the same library).
    // Throws cadenza::Error naming the file when it is missing, cannot be
    // loaded, has no entry symbol, was built for another ABI or returns
    // malformed descriptors.
    static const PluginLibrary& load(const std::filesystem::path& path);
    // The same, but nullptr, without loading it, when the file does not
    // export the entry point (another program's library): its ELF symbol
    // table is read first, since dlopen would run its constructors.
    static const PluginLibrary* load_if_plugin(const std::filesystem::path& path);
    // Like load_if_plugin, but a library that carries a manifest
    // (plugin_manifest.h) and was not loaded yet is described from it
    // without being loaded: its descriptors have no function tables
    // (loaded() is false) until load() is called for the same path.
    static const PluginLibrary* describe_if_plugin(const std::filesystem::path& path);

    // False for a library described from its manifest and not loaded.
    bool loaded() const { return !manifest_; }

    const std::filesystem::path& path() const { return path_; }
    // The host's copies (plugin_tables.h), in the entry point's order.
    const std::vector<const cdz_plugin_descriptor*>& descriptors() const { return descriptors_; }

private:
    std::filesystem::path path_;
    std::vector<std::unique_ptr<PluginTables>> tables_;
    std::vector<const cdz_plugin_descriptor*> descriptors_;
    std::unique_ptr<PluginManifest> manifest_;  // the descriptors of a described library
};

const char* plugin_kind_name(cdz_plugin_kind kind);

}  // namespace cadenza
