// Messages quote what the user gave (keys, paths, lines of a file): before
// such text reaches a terminal or a status it is made printable. A control
// character (a NUL cut messages short, an escape sequence would reach the
// terminal) becomes \xNN, and an overlong line (an 800 KB line was echoed
// whole) keeps its start and says how much was left out.
#pragma once

#include <string>
#include <string_view>

namespace cadenza {

std::string printable_text(std::string_view text);

}  // namespace cadenza
