// What a shared library exports, read from its ELF dynamic symbol table
// without loading it: dlopen runs a library's constructors, so a file is
// opened as a plugin only after this says it exports the entry point as a
// function.
#pragma once

#include <filesystem>
#include <string>

namespace cadenza {

enum class ExportedSymbol { function, data, absent };

// How `path` exports `symbol` (defined in its .dynsym). Throws cadenza::Error
// (CDZ_STATUS_IO_ERROR, naming the file) when the file is not a 64-bit ELF
// shared object for this machine or its tables lie outside the file.
ExportedSymbol exported_symbol(const std::filesystem::path& path, const std::string& symbol);

}  // namespace cadenza
