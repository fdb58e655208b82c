#include "plugin_catalog.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include "error.h"
#include "install_layout.h"
#include "plugin_library.h"
#include "plugin_manifest.h"
#include "printable_text.h"
#include "spelling_suggestion.h"

namespace cadenza {
namespace {

bool is_plugin_library_file(const std::filesystem::path& path) {
    return path.extension() == ".so" && std::filesystem::is_regular_file(path);
}

bool all_found(const std::vector<std::string>& needed, const std::map<std::string, size_t>& active) {
    if (needed.empty()) return false;
    return std::all_of(needed.begin(), needed.end(), [&](const std::string& name) { return active.count(name) > 0; });
}

// The library file a plugin's name suggests: "acceptor.bias" in
// libacceptor_bias.so or libcadenza_acceptor_bias.so (docs/abi.md).
bool names_a_needed_plugin(const std::filesystem::path& file, const std::vector<std::string>& needed,
                           const std::map<std::string, size_t>& active) {
    const std::string stem = file.stem().string();
    for (const auto& name : needed) {
        if (active.count(name)) continue;
        std::string underscored = name;
        std::replace(underscored.begin(), underscored.end(), '.', '_');
        if (stem == "lib" + underscored || stem == "libcadenza_" + underscored) return true;
    }
    return false;
}

std::vector<std::filesystem::path> libraries_at(const PluginLocation& location, std::vector<std::string>& problems) {
    std::vector<std::filesystem::path> found;
    std::error_code error;
    if (!std::filesystem::exists(location.path, error)) {
        if (location.must_exist)
            problems.push_back(location.path.string() + ": plugin path not found (from " + location.origin + ")");
        return found;
    }
    if (!std::filesystem::is_directory(location.path, error)) {
        found.push_back(location.path);
        return found;
    }
    for (const auto& item : std::filesystem::directory_iterator(location.path, error))
        if (is_plugin_library_file(item.path())) found.push_back(item.path());
    if (error) problems.push_back(location.path.string() + ": cannot list plugin directory: " + error.message());
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace

std::vector<PluginLocation> plugin_search_path(const std::vector<PluginLocation>& first) {
    std::vector<PluginLocation> path = first;
    if (const char* environment = std::getenv("CADENZA_PLUGIN_PATH")) {
        std::stringstream entries(environment);
        std::string entry;
        while (std::getline(entries, entry, ':'))
            if (!entry.empty()) path.push_back({entry, "$CADENZA_PLUGIN_PATH", true});
    }
    if (auto own = own_plugin_directory(); !own.empty()) path.push_back({own, "cadenza's own plugins", false});
    return path;
}

PluginCatalog PluginCatalog::scan(const std::vector<PluginLocation>& search_path, const std::vector<std::string>& needed) {
    PluginCatalog catalog;
    catalog.search_path_ = search_path;
    std::set<std::filesystem::path> seen_libraries;
    std::map<std::string, size_t> active;  // name -> index into entries_

    for (const auto& location : search_path) {
        std::map<std::string, std::filesystem::path> in_this_location;
        // A library named on its own is loaded or reported; one found by
        // listing a directory that does not export the entry point is
        // another program's: left alone, not a problem, only named when a
        // plugin is not found.
        std::error_code not_directory;
        const bool listed = std::filesystem::is_directory(location.path, not_directory);
        const auto load = [&](const std::filesystem::path& file) {
            std::error_code error;
            const auto canonical = std::filesystem::weakly_canonical(file, error);
            if (!seen_libraries.insert(error ? file : canonical).second) return;
            const PluginLibrary* library = nullptr;
            try {
                library = PluginLibrary::describe_if_plugin(file);
                if (!library && !listed) library = &PluginLibrary::load(file);  // says why it is not a plugin
            } catch (const Error& e) {
                catalog.problems_.push_back(e.what());
                return;
            }
            if (!library) {
                catalog.skipped_.push_back(file);
                return;
            }
            for (const cdz_plugin_descriptor* descriptor : library->descriptors()) {
                const std::string name = descriptor->name;
                if (auto twin = in_this_location.find(name); twin != in_this_location.end()) {
                    const std::string message = "two plugins named '" + name + "': " + twin->second.string() +
                                                " and " + library->path().string();
                    catalog.problems_.push_back(message);
                    catalog.ambiguous_.push_back(message);
                    continue;
                }
                in_this_location[name] = library->path();
                CatalogEntry entry{descriptor, library->path(), location.origin, false};
                if (active.count(name)) {
                    entry.shadowed = true;
                    spdlog::debug("plugin '{}' in {} is shadowed by {}", name, library->path().string(),
                                  catalog.entries_[active[name]].library.string());
                } else {
                    active[name] = catalog.entries_.size();
                }
                catalog.entries_.push_back(entry);
            }
        };
        const std::vector<std::filesystem::path> files = libraries_at(location, catalog.problems_);
        // The libraries whose file names name a needed plugin first: when
        // they hold every name still needed, the rest of the place stays
        // unopened (a name found here shadows any later one).
        if (!needed.empty()) {
            for (const auto& file : files)
                if (names_a_needed_plugin(file, needed, active)) load(file);
            if (all_found(needed, active)) break;
        }
        for (const auto& file : files) load(file);
        if (all_found(needed, active)) break;
    }
    return catalog;
}

const cdz_plugin_descriptor& CatalogEntry::loaded() const {
    const PluginLibrary& loaded_library = PluginLibrary::load(library);
    for (const cdz_plugin_descriptor* candidate : loaded_library.descriptors()) {
        if (std::string(candidate->name) != descriptor->name) continue;
        if (candidate != descriptor)
            if (auto why = manifest_disagreement(*descriptor, *candidate))
                throw Error(CDZ_STATUS_ABI_MISMATCH, library.string() + ": plugin '" + descriptor->name +
                                                         "': its manifest does not match what it returns (" + *why +
                                                         "); rebuild the library");
        return *candidate;
    }
    throw Error(CDZ_STATUS_ABI_MISMATCH, library.string() + ": its manifest lists plugin '" + descriptor->name +
                                             "', which its entry point does not return; rebuild the library");
}

const CatalogEntry& PluginCatalog::find(const std::string& name) const {
    for (const auto& message : ambiguous_)
        if (message.rfind("two plugins named '" + name + "'", 0) == 0) throw Error(CDZ_STATUS_INVALID_CONFIG, message);
    for (const auto& entry : entries_)
        if (!entry.shadowed && name == entry.descriptor->name) return entry;

    std::vector<std::string> names;
    for (const auto& entry : entries_) names.push_back(entry.descriptor->name);
    std::string message = "no plugin named '" + printable_text(name) + "'" + did_you_mean(name, names) + "; searched:";
    for (const auto& location : search_path_) message += " " + location.path.string() + " (" + location.origin + ")";
    for (const auto& problem : problems_) message += "; also: " + problem;
    if (!skipped_.empty()) {
        message += "; not loaded, since they do not export " + std::string(CDZ_PLUGIN_ENTRY_SYMBOL) + ": " +
                   std::to_string(skipped_.size()) + " librar" + (skipped_.size() == 1 ? "y" : "ies") + " (" +
                   skipped_.front().string() + (skipped_.size() > 1 ? ", ..." : "") + ")";
    }
    throw Error(CDZ_STATUS_NOT_FOUND, message);
}

}  // namespace cadenza
