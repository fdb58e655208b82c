// Normalization of frontend.chars input: strict UTF-8 decoding, typographic
// punctuation and spaces to ASCII, optional lowercasing, whitespace runs to
// one space, trimmed.
#pragma once

#include <string>
#include <string_view>

namespace cadenza::frontend {

struct NormalizerOptions {
    bool lowercase = true;
};

// Throws sdk::Error(INVALID_ARGUMENT) naming the byte offset of invalid
// UTF-8.
std::u32string normalize_text(std::string_view utf8_text, const NormalizerOptions& options);

// The simple lowercase of a letter in ASCII, Latin-1 Supplement or Latin
// Extended-A; any other code point unchanged.
char32_t to_lower(char32_t code_point);

}  // namespace cadenza::frontend
