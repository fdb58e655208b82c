#include "ipa_tokenizer.h"

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend {
namespace {

// "(en)" or "(en-us)" starting at `start`: its length, or 0.
size_t language_marker_length(const std::u32string& text, size_t start) {
    if (text[start] != U'(') return 0;
    size_t end = start + 1;
    while (end < text.size() && ((text[end] >= U'a' && text[end] <= U'z') || text[end] == U'-')) ++end;
    if (end == start + 1 || end >= text.size() || text[end] != U')') return 0;
    return end + 1 - start;
}

}  // namespace

std::u32string tokenize_ipa(std::string_view ipa) {
    std::u32string decoded;
    if (const auto error = decode_utf8(ipa, decoded))
        throw sdk::Error(CDZ_STATUS_INTERNAL, "espeak-ng returned invalid UTF-8 at byte offset " +
                                                     std::to_string(error->offset));
    std::u32string symbols;
    symbols.reserve(decoded.size());
    bool pending_space = false;
    for (size_t i = 0; i < decoded.size();) {
        if (const size_t marker = language_marker_length(decoded, i)) {
            i += marker;
            pending_space = true;  // markers stand at word boundaries
            continue;
        }
        const char32_t cp = decoded[i++];
        if (is_whitespace(cp)) {
            pending_space = true;
            continue;
        }
        if (pending_space && !symbols.empty()) symbols.push_back(U' ');
        pending_space = false;
        symbols.push_back(cp);
    }
    return symbols;
}

}  // namespace cadenza::frontend
