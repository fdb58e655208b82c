#include "install_layout.h"

#include <dlfcn.h>
#include <link.h>

#include <system_error>

#ifndef CADENZA_PLUGIN_DIR_FROM_BINDIR
#error "CADENZA_PLUGIN_DIR_FROM_BINDIR must be defined by the build"
#endif
#ifndef CADENZA_PLUGIN_DIR_FROM_LIBDIR
#error "CADENZA_PLUGIN_DIR_FROM_LIBDIR must be defined by the build"
#endif
#ifndef CADENZA_DATA_DIR_FROM_BINDIR
#error "CADENZA_DATA_DIR_FROM_BINDIR must be defined by the build"
#endif
#ifndef CADENZA_DATA_DIR_FROM_LIBDIR
#error "CADENZA_DATA_DIR_FROM_LIBDIR must be defined by the build"
#endif

namespace cadenza {
namespace {

struct RunningModule {
    std::filesystem::path directory;
    bool is_program = false;
};

// The module this code is linked into: libcadenza.so, or the program itself
// (the CLI and the tests link the core statically), whose link map entry has
// an empty name.
RunningModule running_module() {
    Dl_info info{};
    link_map* module = nullptr;
    if (!dladdr1(reinterpret_cast<void*>(&running_module), &info, reinterpret_cast<void**>(&module), RTLD_DL_LINKMAP) ||
        !module)
        return {};
    std::error_code error;
    const bool is_program = module->l_name == nullptr || module->l_name[0] == '\0';
    const std::filesystem::path file =
        is_program ? std::filesystem::read_symlink("/proc/self/exe", error) : std::filesystem::path(module->l_name);
    if (error || file.empty()) return {};
    const auto absolute = std::filesystem::absolute(file, error);
    if (error) return {};
    const auto canonical = std::filesystem::weakly_canonical(absolute, error);
    if (error) return {};
    return {canonical.parent_path(), is_program};
}

std::filesystem::path relative_to_module(const char* from_bindir, const char* from_libdir) {
    static const RunningModule module = running_module();
    if (module.directory.empty()) return {};
    return (module.directory / (module.is_program ? from_bindir : from_libdir)).lexically_normal();
}

}  // namespace

std::filesystem::path own_plugin_directory() {
    return relative_to_module(CADENZA_PLUGIN_DIR_FROM_BINDIR, CADENZA_PLUGIN_DIR_FROM_LIBDIR);
}

std::filesystem::path own_pipeline_directory() {
    const auto data = relative_to_module(CADENZA_DATA_DIR_FROM_BINDIR, CADENZA_DATA_DIR_FROM_LIBDIR);
    return data.empty() ? data : data / "pipelines";
}

std::filesystem::path resolve_pipeline_path(const std::filesystem::path& path) {
    std::error_code error;
    if (path.empty() || std::filesystem::exists(path, error) || path.has_parent_path()) return path;
    const auto shipped = own_pipeline_directory();
    if (shipped.empty()) return path;
    for (const auto& candidate : {shipped / path, shipped / (path.string() + ".toml")})
        if (std::filesystem::is_regular_file(candidate, error)) return candidate;
    return path;
}

}  // namespace cadenza
