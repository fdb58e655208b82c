// Where the running cadenza's own files are. The install tree and the build
// tree share one layout (bin/, lib/, lib/cadenza/plugins, share/cadenza), and
// these are found relative to the module the core is linked into (the
// program, or libcadenza.so), so a tree works wherever it is copied.
#pragma once

#include <filesystem>

namespace cadenza {

// lib/cadenza/plugins of the running cadenza; empty if its location is unknown.
std::filesystem::path own_plugin_directory();

// share/cadenza/pipelines of the running cadenza; empty if its location is unknown.
std::filesystem::path own_pipeline_directory();

// A pipeline argument: a path that exists is returned as it is; a bare name
// ("default" or "default.toml", no directory) that names no file here is
// looked up among the shipped pipelines. Otherwise the path, unchanged.
std::filesystem::path resolve_pipeline_path(const std::filesystem::path& path);

}  // namespace cadenza
