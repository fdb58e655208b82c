// What a shared library exports and carries, read from its ELF file without
// loading it: dlopen runs a library's constructors (and loads what it links),
// so a file is opened as a plugin only after this says it exports the entry
// point as a function, and is described from its manifest section
// (plugin_manifest.h) when it has one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace cadenza {

enum class ExportedSymbol { function, data, absent };

// How `path` exports `symbol` (defined in its .dynsym). Throws cadenza::Error
// (CDZ_STATUS_IO_ERROR, naming the file) when the file is not a 64-bit ELF
// shared object for this machine or its tables lie outside the file.
ExportedSymbol exported_symbol(const std::filesystem::path& path, const std::string& symbol);

// The bytes of the section named `name`, or nothing when there is none.
// Throws as exported_symbol does.
std::optional<std::string> section_contents(const std::filesystem::path& path, const std::string& name);

}  // namespace cadenza
