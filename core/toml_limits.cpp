#include "toml_limits.h"

namespace cadenza {
namespace {

// Walks TOML text, skipping strings and comments, and calls
// on_segment(segments so far, line, column) at every '.' between the
// segments of a key or a table header.
class KeyScanner {
public:
    explicit KeyScanner(const std::string& text) : text_(text) {}

    template <typename OnSegment>
    void run(const OnSegment& on_segment) {
        bool line_start = true, in_key = false, in_header = false;
        std::vector<char> open;  // '[' arrays and '{' inline tables inside a value
        std::size_t segments = 0;
        while (i_ < text_.size()) {
            const char c = text_[i_];
            if (c == '"' || c == '\'') {
                skip_string(c);
                continue;
            }
            if (c == '#') {
                while (i_ < text_.size() && text_[i_] != '\n') advance();
                continue;
            }
            if (c == '\n') {
                advance();
                line_start = open.empty();
                continue;
            }
            if (c == ' ' || c == '\t' || c == '\r') {
                advance();
                continue;
            }
            if (line_start) {
                line_start = false;
                in_key = true;
                segments = 1;
                if (c == '[') {
                    in_header = true;
                    while (i_ < text_.size() && text_[i_] == '[') advance();
                    continue;
                }
            }
            if (in_key) {
                if (c == '.') {
                    on_segment(++segments, line_, column_);
                } else if (in_header && c == ']') {
                    in_header = in_key = false;
                } else if (!in_header && c == '=') {
                    in_key = false;
                }
                advance();
                continue;
            }
            if (c == '[' || c == '{') open.push_back(c);
            if ((c == ']' || c == '}') && !open.empty()) open.pop_back();
            if ((c == '{' || c == ',') && !open.empty() && open.back() == '{') {
                in_key = true;
                segments = 1;
            }
            advance();
        }
    }

private:
    const std::string& text_;
    std::size_t i_ = 0;
    uint32_t line_ = 1, column_ = 1;

    void advance() {
        if (text_[i_] == '\n') {
            ++line_;
            column_ = 1;
        } else {
            ++column_;
        }
        ++i_;
    }

    void skip_string(char quote) {
        const bool triple = text_.compare(i_, 3, std::string(3, quote)) == 0;
        for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
        while (i_ < text_.size()) {
            if (quote == '"' && text_[i_] == '\\' && i_ + 1 < text_.size()) {
                advance();
                advance();
                continue;
            }
            if (!triple && text_[i_] == '\n') return;  // unterminated: toml++ reports it
            if (text_[i_] == quote && (!triple || text_.compare(i_, 3, std::string(3, quote)) == 0)) {
                for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
                return;
            }
            advance();
        }
    }
};

}  // namespace

void check_toml_limits(const std::string& text, const std::string& source, const TomlLimits& limits) {
    if (text.size() > limits.max_bytes)
        throw ValidationError({Diagnostic{source, 0, 0,
                                          "larger than " + std::to_string(limits.max_bytes) +
                                              " bytes, the limit for a pipeline file"}});
    KeyScanner(text).run([&](std::size_t segments, uint32_t line, uint32_t column) {
        if (segments > limits.max_key_segments)
            throw ValidationError({Diagnostic{source, line, column,
                                              "a key or table name with more than " +
                                                  std::to_string(limits.max_key_segments) +
                                                  " dotted parts (a pipeline nests a few)"}});
    });
}

std::vector<Diagnostic> capped_diagnostics(std::vector<Diagnostic> diagnostics, const std::string& source,
                                           const TomlLimits& limits) {
    if (diagnostics.size() <= limits.max_diagnostics) return diagnostics;
    const std::size_t more = diagnostics.size() - limits.max_diagnostics;
    diagnostics.resize(limits.max_diagnostics);
    diagnostics.push_back(Diagnostic{source, 0, 0, std::to_string(more) + " more errors not shown"});
    return diagnostics;
}

}  // namespace cadenza
