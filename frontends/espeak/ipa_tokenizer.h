// espeak-ng's IPA string to symbols: one Unicode code point per symbol
// (stress, length and tie marks are symbols of their own), one space between
// words.
#pragma once

#include <string>
#include <string_view>

namespace cadenza::frontend {

// Drops espeak-ng's language switch markers ("(en)", "(fr)"), which stand
// between words, collapses
// whitespace runs to one space and trims. Throws sdk::Error(INTERNAL) if
// `ipa` is not valid UTF-8.
std::u32string tokenize_ipa(std::string_view ipa);

}  // namespace cadenza::frontend
