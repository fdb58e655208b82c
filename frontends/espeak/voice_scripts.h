// Which characters frontend.espeak hands to espeak-ng: those of the scripts
// its voice's language is written in, plus Latin, digits, punctuation and
// common symbols. espeak-ng switches to another language's translator for a
// word in a foreign script, and release 1.51 (Debian 12's) reads freed
// memory doing so for some characters (Armenian U+0558-U+055A and
// U+0588-U+058F among Latin text, archaic Hangul jamo U+1180-U+11A7 and
// U+11C3-U+11FF; found by fuzz_frontend_text, docs/reliability.md), so a
// character of another script is refused before the library sees it.
#pragma once

#include <string>
#include <vector>

namespace cadenza::frontend::espeak {

struct Script;  // a script's name, its languages and code point ranges

class VoiceScripts {
public:
    // The scripts of `language` (an espeak-ng voice's first declared
    // language: "en-us", "ru", "hy", "cmn"); Latin alone for a language this
    // table does not name.
    static VoiceScripts for_language(const std::string& language);

    // Throws sdk::Error(INVALID_ARGUMENT) naming the first character
    // outside the voice's scripts, its position and the scripts.
    void check(const std::u32string& code_points) const;

    // "Latin" or "Latin, Cyrillic".
    std::string names() const;

private:
    std::string language_;
    std::vector<const Script*> scripts_;
};

}  // namespace cadenza::frontend::espeak
