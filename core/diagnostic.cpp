#include "diagnostic.h"

#include "printable_text.h"

namespace cadenza {

std::string Diagnostic::to_string() const {
    std::string text = file;
    if (line > 0) text += ":" + std::to_string(line) + ":" + std::to_string(column);
    return printable_text(text + ": " + message);
}

std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics) {
    std::string text;
    for (const auto& diagnostic : diagnostics) {
        if (!text.empty()) text += '\n';
        text += diagnostic.to_string();
    }
    return text;
}

ValidationError::ValidationError(std::vector<Diagnostic> diagnostics)
    : Error(CDZ_STATUS_INVALID_CONFIG, format_diagnostics(diagnostics)),
      diagnostics_(std::move(diagnostics)) {}

}  // namespace cadenza
