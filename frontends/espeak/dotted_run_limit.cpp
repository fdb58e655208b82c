#include "dotted_run_limit.h"

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend::espeak {
namespace {

bool is_whitespace(char32_t c) { return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r'; }

size_t lower_cased_bytes_at_most(char32_t c) {
    if (c < 0x80) return 1;
    return c < 0x10000 ? 3 : 4;
}

// The first non-whitespace character at or after `i`, or `text.size()`.
size_t next_visible(const std::u32string& text, size_t i) {
    while (i < text.size() && is_whitespace(text[i])) ++i;
    return i;
}

}  // namespace

void check_dotted_runs(const std::u32string& code_points) {
    size_t start = next_visible(code_points, 0);
    while (start < code_points.size()) {
        size_t end = start;  // one past the run's last visible character
        size_t bytes = 0;
        bool dotted = false;
        for (size_t i = start; i < code_points.size();) {
            bytes += lower_cased_bytes_at_most(code_points[i]);
            dotted = dotted || code_points[i] == U'.';
            end = i + 1;
            const size_t next = next_visible(code_points, end);
            if (next == code_points.size()) break;
            if (next > end && code_points[i] != U'.' && code_points[next] != U'.') break;
            i = next;
        }
        if (dotted && bytes > dotted_run_max_bytes)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                             "the text has a run of " + std::to_string(end - start) +
                                 " characters joined by '.' (characters " + std::to_string(start + 1) + "-" +
                                 std::to_string(end) + ", starting \"" + encode_utf8(code_points.substr(start, 12)) +
                                 "\"): frontend.espeak passes espeak-ng such a run only up to " +
                                 std::to_string(dotted_run_max_bytes) + " bytes (counting " + std::to_string(bytes) +
                                 " here, as lower-cased UTF-8 at most, without whitespace), because espeak-ng 1.51 "
                                 "overflows a 160-byte stack buffer on an abbreviation followed by a long word; "
                                 "separate the words with spaces away from the dots");
        start = next_visible(code_points, end);
    }
}

}  // namespace cadenza::frontend::espeak
