// The process-wide espeak-ng library. espeak-ng keeps global state (the
// current voice, its dictionaries, buffers), so every call goes through one
// mutex, and before each conversion the voice is selected again if another
// instance (or other code) changed it: instances may use different voices.
#pragma once

#include <string>

namespace cadenza::frontend::espeak {

// Initializes espeak-ng once per process. `data_path` is an espeak-ng-data
// directory or its parent, or "" for the library's default. A later call
// must name the same data path. Throws sdk::Error.
void initialize(const std::string& data_path);

// The first language `voice` declares ("en-us" for "en-us" and for
// "gmw/en-US"). Throws sdk::Error(INVALID_CONFIG) naming `voice` when
// espeak-ng has no such voice. A voice is a voice name or file ("en-us",
// "gmw/en") or a language one voice declares ("en-gb").
std::string voice_language(const std::string& voice);

// The IPA of UTF-8 `text` spoken with `voice`: espeak-ng's clauses joined
// with a space, converted in a child process (child_process_worker.h).
// Requires initialize(). Throws sdk::Error when espeak-ng crashes, hangs
// or answers too much on this text; the next call starts a fresh child.
std::string text_to_ipa(const std::string& voice, const std::string& text);

}  // namespace cadenza::frontend::espeak
