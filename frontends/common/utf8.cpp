#include "utf8.h"

#include <cstdio>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::frontend {

std::optional<Utf8Error> decode_utf8(std::string_view text, std::u32string& out) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
    const size_t size = text.size();
    size_t i = 0;
    while (i < size) {
        const unsigned char lead = bytes[i];
        if (lead < 0x80) {
            out.push_back(lead);
            ++i;
            continue;
        }
        size_t length = 0;
        char32_t code_point = 0;
        char32_t minimum = 0;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
            code_point = lead & 0x1F;
            minimum = 0x80;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            code_point = lead & 0x0F;
            minimum = 0x800;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            code_point = lead & 0x07;
            minimum = 0x10000;
        } else if (lead >= 0x80 && lead <= 0xBF) {
            return Utf8Error{i, "unexpected continuation byte"};
        } else {
            return Utf8Error{i, lead == 0xC0 || lead == 0xC1 ? "overlong encoding" : "invalid lead byte"};
        }
        if (i + length > size) return Utf8Error{i, "truncated sequence"};
        for (size_t k = 1; k < length; ++k) {
            const unsigned char next = bytes[i + k];
            if ((next & 0xC0) != 0x80) return Utf8Error{i, "truncated sequence"};
            code_point = (code_point << 6) | (next & 0x3F);
        }
        if (code_point < minimum) return Utf8Error{i, "overlong encoding"};
        if (code_point >= 0xD800 && code_point <= 0xDFFF) return Utf8Error{i, "encoded surrogate"};
        if (code_point > 0x10FFFF) return Utf8Error{i, "code point above U+10FFFF"};
        out.push_back(code_point);
        i += length;
    }
    return std::nullopt;
}

std::u32string decode_utf8_or_throw(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    if (const auto error = decode_utf8(text, out))
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "invalid UTF-8 at byte offset " +
                                                             std::to_string(error->offset) + ": " +
                                                             error->reason);
    return out;
}

void append_utf8(char32_t cp, std::string& out) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

std::string encode_utf8(std::u32string_view code_points) {
    std::string out;
    out.reserve(code_points.size());
    for (const char32_t cp : code_points) append_utf8(cp, out);
    return out;
}

std::string describe_code_point(char32_t code_point) {
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(code_point));
    if (is_control(code_point) || is_whitespace(code_point)) return code;
    std::string shown = "'";
    append_utf8(code_point, shown);
    return shown + "' (" + code + ")";
}

bool is_whitespace(char32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

bool is_control(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

}  // namespace cadenza::frontend
