#include "text_normalizer.h"

#include "utf8.h"

namespace cadenza::frontend {
namespace {

// Typographic punctuation with an ASCII equivalent; NULL when there is none.
const char* ascii_equivalent(char32_t cp) {
    switch (cp) {
        case 0x2018: case 0x2019: case 0x201A: case 0x201B:  // ‘ ’ ‚ ‛
        case 0x2032: case 0x02BC:                            // ′ ʼ
            return "'";
        case 0x201C: case 0x201D: case 0x201E: case 0x201F:  // “ ” „ ‟
        case 0x2033: case 0x00AB: case 0x00BB:               // ″ « »
            return "\"";
        case 0x2010: case 0x2011: case 0x2012: case 0x2013:  // ‐ ‑ ‒ –
        case 0x2014: case 0x2015: case 0x2212:               // — ― −
            return "-";
        case 0x2026:  // …
            return "...";
        default:
            return nullptr;
    }
}

// Invisible characters that carry nothing to pronounce.
bool is_removed(char32_t cp) {
    return cp == 0x00AD ||                   // soft hyphen
           (cp >= 0x200B && cp <= 0x200D) ||  // zero-width space, non-joiner, joiner
           cp == 0x2060 || cp == 0xFEFF;      // word joiner, byte order mark
}

}  // namespace

char32_t to_lower(char32_t cp) {
    if (cp >= U'A' && cp <= U'Z') return cp + 0x20;
    if (cp < 0xC0) return cp;
    if (cp <= 0xDE) return cp == 0xD7 ? cp : cp + 0x20;  // À..Þ except ×
    if (cp < 0x100 || cp > 0x17E) return cp;
    if (cp == 0x130) return U'i';  // İ
    if (cp == 0x178) return 0xFF;  // Ÿ
    // Latin Extended-A pairs capital and small letters; which one comes first
    // (even or odd code point) changes at U+0138 and U+0178.
    const bool capital_is_even = cp < 0x138 || (cp > 0x149 && cp < 0x178);
    const bool capital_is_odd = (cp > 0x138 && cp < 0x149) || cp > 0x178;
    if (cp == 0x131 || cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;  // no capital pair
    if (capital_is_even && cp % 2 == 0) return cp + 1;
    if (capital_is_odd && cp % 2 == 1) return cp + 1;
    return cp;
}

std::u32string normalize_text(std::string_view utf8_text, const NormalizerOptions& options) {
    const std::u32string decoded = decode_utf8_or_throw(utf8_text);
    std::u32string out;
    out.reserve(decoded.size());
    bool pending_space = false;
    auto emit = [&](char32_t cp) {
        if (pending_space && !out.empty()) out.push_back(U' ');
        pending_space = false;
        out.push_back(options.lowercase ? to_lower(cp) : cp);
    };
    for (const char32_t cp : decoded) {
        if (is_whitespace(cp) || is_control(cp)) {
            pending_space = true;  // other control characters separate words too
        } else if (is_removed(cp)) {
            continue;
        } else if (const char* ascii = ascii_equivalent(cp)) {
            for (const char* c = ascii; *c; ++c) emit(static_cast<char32_t>(*c));
        } else {
            emit(cp);
        }
    }
    return out;
}

}  // namespace cadenza::frontend
