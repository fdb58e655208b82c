#include "plugin_library.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <string>

#include <boost/dll/shared_library.hpp>

#include "descriptor_check.h"
#include "error.h"
#include "host_api.h"
#include "shared_object_symbols.h"
#include "status_object.h"

namespace cadenza {
namespace {

struct LoadedLibraries {
    std::mutex mutex;
    std::map<std::filesystem::path, std::unique_ptr<PluginLibrary>> by_path;
    std::map<std::filesystem::path, std::unique_ptr<PluginLibrary>> described_by_path;
    // Never unloaded: plugin code may be referenced until the process ends.
    std::vector<std::unique_ptr<boost::dll::shared_library>> handles;
};

LoadedLibraries& loaded_libraries() {
    static auto* libraries = new LoadedLibraries;  // deliberately never destroyed
    return *libraries;
}

// Whether the file exports the entry point as a function, read from its
// symbol table without loading it.
bool exports_entry_point(const std::filesystem::path& path, const std::string& shown) {
    switch (exported_symbol(path, CDZ_PLUGIN_ENTRY_SYMBOL)) {
        case ExportedSymbol::function: return true;
        case ExportedSymbol::absent: return false;
        case ExportedSymbol::data: break;
    }
    throw Error(CDZ_STATUS_INVALID_ARGUMENT, shown + ": not a cadenza plugin: its '" +
                                                 std::string(CDZ_PLUGIN_ENTRY_SYMBOL) +
                                                 "' is data, not a function (not loaded)");
}

// The canonical path of a library file that exists; throws naming it otherwise.
std::filesystem::path existing_library(const std::filesystem::path& requested) {
    std::error_code filesystem_error;
    if (!std::filesystem::is_regular_file(requested, filesystem_error))
        throw Error(CDZ_STATUS_NOT_FOUND, requested.string() + ": plugin library not found");
    return std::filesystem::canonical(requested);
}

}  // namespace

const char* plugin_kind_name(cdz_plugin_kind kind) {
    switch (kind) {
        case CDZ_PLUGIN_KIND_FRONTEND: return "frontend";
        case CDZ_PLUGIN_KIND_CODEC: return "codec";
        case CDZ_PLUGIN_KIND_BACKBONE: return "backbone";
        case CDZ_PLUGIN_KIND_DRAFTER: return "drafter";
        case CDZ_PLUGIN_KIND_ACCEPTOR: return "acceptor";
    }
    return "unknown";
}

const PluginLibrary& PluginLibrary::load(const std::filesystem::path& requested) {
    if (const PluginLibrary* library = load_if_plugin(requested)) return *library;
    throw Error(CDZ_STATUS_NOT_FOUND, requested.string() + ": not a cadenza plugin: it does not export '" +
                                          std::string(CDZ_PLUGIN_ENTRY_SYMBOL) + "' (not loaded)");
}

const PluginLibrary* PluginLibrary::load_if_plugin(const std::filesystem::path& requested) {
    const std::string shown = requested.string();
    const std::filesystem::path path = existing_library(requested);

    LoadedLibraries& libraries = loaded_libraries();
    std::lock_guard<std::mutex> lock(libraries.mutex);
    if (auto found = libraries.by_path.find(path); found != libraries.by_path.end())
        return found->second.get();

    if (!exports_entry_point(path, shown)) return nullptr;

    auto handle = std::make_unique<boost::dll::shared_library>();
    boost::dll::fs::error_code load_error;
    handle->load(path, load_error, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local);
    if (load_error || !handle->is_loaded()) {
        const char* reason = dlerror();
        throw Error(CDZ_STATUS_IO_ERROR, shown + ": cannot load plugin library: " +
                                             (reason ? reason : load_error.message()));
    }
    if (!handle->has(CDZ_PLUGIN_ENTRY_SYMBOL))  // the symbol table said otherwise: a malformed file
        throw Error(CDZ_STATUS_NOT_FOUND, shown + ": not a cadenza plugin: it does not export '" +
                                              std::string(CDZ_PLUGIN_ENTRY_SYMBOL) + "'");

    auto entry = handle->get<cdz_status*(const cdz_host_api*, cdz_plugin_list*)>(CDZ_PLUGIN_ENTRY_SYMBOL);
    cdz_plugin_list list{};
    list.struct_size = sizeof(list);
    cdz_status* status = nullptr;
    try {
        status = entry(host_api(), &list);
    } catch (...) {
        throw Error(CDZ_STATUS_INTERNAL, shown + ": the entry point let an exception escape");
    }
    throw_if_error(status, shown + ": the entry point failed");
    if (list.count > 0 && !list.descriptors)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, shown + ": the entry point returned no descriptor array");

    auto library = std::make_unique<PluginLibrary>();
    library->path_ = path;
    std::set<std::string> names;
    for (uint32_t i = 0; i < list.count; ++i) {
        const cdz_plugin_descriptor* descriptor = list.descriptors[i];
        check_descriptor(descriptor, shown);
        if (!names.insert(descriptor->name).second)
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        shown + ": two plugins with one name '" + descriptor->name + "' in this library");
        library->tables_.push_back(std::make_unique<PluginTables>(*descriptor));
        library->descriptors_.push_back(&library->tables_.back()->descriptor());
    }
    libraries.handles.push_back(std::move(handle));
    auto& stored = libraries.by_path[path];
    stored = std::move(library);
    return stored.get();
}

const PluginLibrary* PluginLibrary::describe_if_plugin(const std::filesystem::path& requested) {
    const std::string shown = requested.string();
    const std::filesystem::path path = existing_library(requested);
    {
        LoadedLibraries& libraries = loaded_libraries();
        std::lock_guard<std::mutex> lock(libraries.mutex);
        if (auto found = libraries.by_path.find(path); found != libraries.by_path.end()) return found->second.get();
        if (auto found = libraries.described_by_path.find(path); found != libraries.described_by_path.end())
            return found->second.get();
        if (!exports_entry_point(path, shown)) return nullptr;
        if (auto manifest = read_plugin_manifest(path)) {
            auto library = std::make_unique<PluginLibrary>();
            library->path_ = path;
            library->descriptors_ = manifest->descriptors();
            library->manifest_ = std::move(manifest);
            std::set<std::string> names;
            for (const cdz_plugin_descriptor* descriptor : library->descriptors_)
                if (!names.insert(descriptor->name).second)
                    throw Error(CDZ_STATUS_INVALID_CONFIG, shown + ": its manifest names plugin '" +
                                                               descriptor->name + "' twice");
            auto& stored = libraries.described_by_path[path];
            stored = std::move(library);
            return stored.get();
        }
    }
    return load_if_plugin(requested);
}

}  // namespace cadenza
