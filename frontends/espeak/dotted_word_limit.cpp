#include "dotted_word_limit.h"

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend::espeak {
namespace {

bool separates_words(char32_t c) { return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r'; }

size_t lower_cased_bytes_at_most(char32_t c) {
    if (c < 0x80) return 1;
    return c < 0x10000 ? 3 : 4;
}

}  // namespace

void check_dotted_words(const std::u32string& code_points) {
    size_t start = 0;
    while (start < code_points.size()) {
        if (separates_words(code_points[start])) {
            ++start;
            continue;
        }
        size_t end = start;
        size_t bytes = 0;
        bool inner_dot = false;
        for (; end < code_points.size() && !separates_words(code_points[end]); ++end) {
            bytes += lower_cased_bytes_at_most(code_points[end]);
            if (code_points[end] == U'.' && end + 1 < code_points.size() && !separates_words(code_points[end + 1]))
                inner_dot = true;
        }
        if (inner_dot && bytes > dotted_word_max_bytes)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                             "the text has a word with a '.' inside, " + std::to_string(end - start) +
                                 " characters long (characters " + std::to_string(start + 1) + "-" +
                                 std::to_string(end) + ", starting \"" +
                                 encode_utf8(code_points.substr(start, 12)) + "\"): frontend.espeak passes "
                                 "espeak-ng such a word only up to " + std::to_string(dotted_word_max_bytes) +
                                 " bytes (counting " + std::to_string(bytes) +
                                 " here, as lower-cased UTF-8 at most), because espeak-ng 1.51 overflows a "
                                 "160-byte stack buffer on a single-letter abbreviation followed by a long word; "
                                 "separate the word with spaces");
        start = end;
    }
}

}  // namespace cadenza::frontend::espeak
