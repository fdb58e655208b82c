// A problem found in a file, reported as "file:line:column: message".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "error.h"

namespace cadenza {

struct Diagnostic {
    std::string file;
    uint32_t line = 0;    // 1-based; 0 when unknown
    uint32_t column = 0;  // 1-based; 0 when unknown
    std::string message;

    std::string to_string() const;
};

// All diagnostics of one validation, one per line.
std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics);

// Thrown when validation found problems; what() holds every one of them.
class ValidationError : public Error {
public:
    explicit ValidationError(std::vector<Diagnostic> diagnostics);
    const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

private:
    std::vector<Diagnostic> diagnostics_;
};

}  // namespace cadenza
