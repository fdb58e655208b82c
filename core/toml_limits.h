// Bounds a pipeline file is held to before toml++ parses it. toml++ recurses
// once per segment of a dotted key or table header (a header nesting 40,000
// levels overflows the stack and kills the embedding program), and nothing
// else bounds a file's size or the errors reported on it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "diagnostic.h"

namespace cadenza {

struct TomlLimits {
    std::size_t max_bytes = std::size_t{1} << 20;  // 1 MiB; the shipped pipelines are under 2 KB
    std::size_t max_key_segments = 32;             // a.b.c = 1 and [a.b.c] have 3
    std::size_t max_diagnostics = 100;             // errors reported on one file; the rest are counted
};

// Throws ValidationError naming `source` (and the line and column of the
// key) when `text` breaks a limit. Scans once, without building anything.
void check_toml_limits(const std::string& text, const std::string& source, const TomlLimits& limits = {});

// The first limits.max_diagnostics entries, then one saying how many more
// there were.
std::vector<Diagnostic> capped_diagnostics(std::vector<Diagnostic> diagnostics, const std::string& source,
                                           const TomlLimits& limits = {});

}  // namespace cadenza
