// "did you mean" for misspelled keys, tables and plugin names.
#pragma once

#include <string>
#include <vector>

namespace cadenza {

// The closest of `candidates` to `word` by edit distance when it is close
// enough to be a plausible typo, else an empty string.
std::string closest_spelling(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace cadenza
