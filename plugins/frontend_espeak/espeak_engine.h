// The process-wide espeak-ng library. espeak-ng keeps global state (the
// current voice, its dictionaries, buffers), so every call goes through one
// mutex, and before each conversion the voice is selected again if another
// instance (or other code) changed it: instances may use different voices.
#pragma once

#include <string>

namespace cadenza::frontend::espeak {

// Initializes espeak-ng once per process. `data_path` is an espeak-ng-data
// directory or its parent, or "" for the library's default. A later call
// must name the same data path. Throws FrontendError.
void initialize(const std::string& data_path);

// Throws FrontendError(INVALID_CONFIG) naming `voice` when espeak-ng has no
// such voice. A voice is a voice name or file ("en-us", "gmw/en") or a
// language one voice declares ("en-gb").
void check_voice(const std::string& voice);

// Throws FrontendError(INVALID_ARGUMENT) naming the character when the text
// holds one that the espeak-ng release in use mishandles: 1.51 (Debian 12)
// reads freed memory on an archaic Hangul jamo (U+1180-U+11A7,
// U+11C3-U+11FF; found by fuzz_frontend_text; the other jamo and the Hangul
// syllables are fine).
void check_text(const std::u32string& code_points);

// The IPA of UTF-8 `text` spoken with `voice`: espeak-ng's clauses joined
// with a space. Requires initialize().
std::string text_to_ipa(const std::string& voice, const std::string& text);

}  // namespace cadenza::frontend::espeak
