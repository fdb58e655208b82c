// The process-wide flite library as a phonemizer: flite's US English text
// analysis (tokens, numbers, CMU lexicon and letter-to-sound rules, phrasing,
// pauses, post-lexical rules) with the kal16 voice's settings, stopped before
// any audio is made. Its phones are the CMU set that the speech corpus's
// flite and festival voices speak, so a target trained on the corpus's
// phone alignments reads the same symbols at synthesis. flite keeps global
// state, so every call goes through one mutex.
#pragma once

#include <string>
#include <vector>

namespace cadenza::frontend::flite {

// The phones of UTF-8 `text` in order, pauses as "pau" (one at each end).
// Throws sdk::Error when flite fails.
std::vector<std::string> text_to_phones(const std::string& text);

}  // namespace cadenza::frontend::flite
