// Strict UTF-8 decoding and encoding, and the few code point facts the
// frontends share.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cadenza::frontend {

struct Utf8Error {
    size_t offset;       // of the first byte of the bad sequence
    const char* reason;  // e.g. "truncated sequence"
};

// Appends the code points of `text` to `out`. Rejects stray continuation
// bytes, truncated sequences, overlong forms, surrogates and values above
// U+10FFFF; on error `out` holds the code points before the bad sequence.
std::optional<Utf8Error> decode_utf8(std::string_view text, std::u32string& out);

// decode_utf8 that throws sdk::Error(INVALID_ARGUMENT) naming the byte
// offset: "invalid UTF-8 at byte offset 7: truncated sequence".
std::u32string decode_utf8_or_throw(std::string_view text);

void append_utf8(char32_t code_point, std::string& out);
std::string encode_utf8(std::u32string_view code_points);

// "'é' (U+00E9)"; control and whitespace characters are shown by code only.
std::string describe_code_point(char32_t code_point);

// Unicode White_Space (ASCII whitespace, NEL, no-break and typographic
// spaces, line and paragraph separators).
bool is_whitespace(char32_t code_point);

// C0 and C1 control characters and DEL.
bool is_control(char32_t code_point);

}  // namespace cadenza::frontend
