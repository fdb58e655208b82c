// How long a word with a dot inside may be when frontend.espeak hands it to
// espeak-ng. Release 1.51 (Debian 12's) reads a single-letter abbreviation
// and the word after its dot ("d.aaaa", "a.b.c.word") into a 160-byte stack
// buffer without a bound (LookupDictList; later releases check it), so
// "d." followed by 167 letters smashes the stack (found by
// fuzz_frontend_text, docs/reliability.md). Only an ASCII '.' followed by
// more of the word starts that path (fullwidth and other dots do not).
#pragma once

#include <cstddef>
#include <string>

namespace cadenza::frontend::espeak {

// A word is a run of characters between ASCII spaces, tabs and line breaks
// (espeak-ng splits words at more places, never at fewer). Its size is
// counted as espeak-ng may hold it once lower-cased: one byte per ASCII
// character, three per other character below U+10000 (a two-byte capital
// such as U+023A lower-cases to three bytes), four above.
constexpr size_t dotted_word_max_bytes = 128;

// Throws sdk::Error(INVALID_ARGUMENT) naming the first word with a '.'
// before its last character whose size exceeds dotted_word_max_bytes: its
// position in characters, its start and its size.
void check_dotted_words(const std::u32string& code_points);

}  // namespace cadenza::frontend::espeak
