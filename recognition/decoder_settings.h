// The pocketsphinx settings cadenza passes on, each with the values it
// accepts. pocketsphinx takes any text for a number (atof: "abc" is 0) and
// some values crash it (lw=0 aborts on an assertion, maxwpf=0 segfaults,
// ds=0 divides by zero), so a setting is checked here before it reaches the
// decoder, and only the tuning knobs listed are passed at all.
#pragma once

#include <string>

namespace cadenza::recognition {

// Throws std::invalid_argument saying what is wrong with NAME (with or
// without its leading '-') = VALUE, or which settings exist.
void check_decoder_setting(const std::string& name, const std::string& value);

}  // namespace cadenza::recognition
