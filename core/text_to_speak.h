// What a synthesis request's text must be before it reaches the frontend:
// something to say (empty, punctuation-only or emoji-only text gave half a
// second of babble with status OK) and not far longer than the backbone can
// ever hold (100,000 characters spent 24 s in the frontend before the
// positions error).
#pragma once

#include <cstdint>
#include <string>

namespace cadenza {

// Throws cadenza::Error (CDZ_STATUS_INVALID_ARGUMENT) when `text` has no
// letter or digit of any script, or has more than 8 bytes per position the
// backbone holds (no frontend yields fewer symbols than one per 8 bytes of
// words; `max_positions` <= 0: no bound).
void check_text_to_speak(const std::string& text, int64_t max_positions);

}  // namespace cadenza
