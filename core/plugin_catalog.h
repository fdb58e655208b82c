// Every plugin found along a search path. The search order is: paths the
// caller gives first (the embedding API's, then the pipeline's plugin_paths),
// then $CADENZA_PLUGIN_PATH, then cadenza's own plugins (lib/cadenza/plugins
// beside the program or libcadenza.so, in the build tree as in an install).
// A name found in an earlier place shadows the same name later on; two
// plugins with one name in the same place are an error.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza {

struct PluginLocation {
    std::filesystem::path path;  // a directory of plugin libraries, or one library
    std::string origin;          // "pipeline plugin_paths", "$CADENZA_PLUGIN_PATH", ...
    bool must_exist = false;     // given explicitly: missing is an error
};

// The caller's locations followed by the environment and cadenza's own plugins.
std::vector<PluginLocation> plugin_search_path(const std::vector<PluginLocation>& first = {});

struct CatalogEntry {
    // Without a function table when the library was described from its
    // manifest (plugin_manifest.h) and not loaded: enough to list and to
    // validate a pipeline.
    const cdz_plugin_descriptor* descriptor = nullptr;
    std::filesystem::path library;
    std::string origin;
    bool shadowed = false;  // an earlier location has a plugin of this name

    // The descriptor with its function table, loading the library if it was
    // only described. Throws cadenza::Error naming the library when it fails
    // to load or does not return what its manifest says.
    const cdz_plugin_descriptor& loaded() const;
};

class PluginCatalog {
public:
    // Loads the plugin libraries along the search path: every one, or with
    // `needed` names only the places up to the one where the last of them is
    // found, and in that place only the libraries whose file names name
    // them (lib<name>.so or libcadenza_<name>.so, dots as underscores) when
    // those hold every name still needed. A directory's libraries that do
    // not export the entry point are not loaded (skipped()). Problems
    // (missing explicit locations, libraries that fail to load, ambiguous
    // names among the loaded libraries) are collected, not thrown.
    static PluginCatalog scan(const std::vector<PluginLocation>& search_path,
                              const std::vector<std::string>& needed = {});

    // The active plugin of that name. Throws cadenza::Error when it is not
    // found (with the places searched and a suggestion) or is ambiguous.
    const CatalogEntry& find(const std::string& name) const;

    const std::vector<CatalogEntry>& entries() const { return entries_; }
    const std::vector<std::string>& problems() const { return problems_; }
    const std::vector<PluginLocation>& search_path() const { return search_path_; }
    const std::vector<std::filesystem::path>& skipped() const { return skipped_; }

private:
    std::vector<PluginLocation> search_path_;
    std::vector<CatalogEntry> entries_;
    std::vector<std::string> problems_;
    std::vector<std::string> ambiguous_;  // "name: a.so and b.so"
    std::vector<std::filesystem::path> skipped_;
};

}  // namespace cadenza
