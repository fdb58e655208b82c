// How long a run of text joined by dots may be when frontend.espeak hands it
// to espeak-ng. Release 1.51 (Debian 12's) reads an abbreviation (single
// letters, each followed by a dot: "d.", "a . b .", "g .") and the word after
// it into a 160-byte stack buffer without a bound (LookupDictList; later
// releases check it), so "d." followed by 167 letters, "g . " followed by
// 200, or "a . " 100 times smash the stack (found by fuzz_frontend_text,
// docs/reliability.md). Only an ASCII '.' starts that path (fullwidth and
// other dots do not).
#pragma once

#include <cstddef>
#include <string>

namespace cadenza::frontend::espeak {

// A dotted run: characters between ASCII spaces, tabs and line breaks,
// where the whitespace next to a '.' does not end the run ("a . b . word"
// is one run), holding at least one '.'. espeak-ng splits words at more
// places than whitespace and joins fewer, so the abbreviation and its word
// always lie inside one dotted run. A run's size is counted without its
// whitespace, as espeak-ng may hold it once lower-cased: one byte per ASCII
// character, three per other character below U+10000 (a two-byte capital
// such as U+023A lower-cases to three bytes), four above.
constexpr size_t dotted_run_max_bytes = 128;

// Throws sdk::Error(INVALID_ARGUMENT) naming the first dotted run above
// dotted_run_max_bytes: its position in characters, its start and its size.
void check_dotted_runs(const std::u32string& code_points);

}  // namespace cadenza::frontend::espeak
