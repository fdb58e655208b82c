#include "printable_text.h"

#include <algorithm>

namespace cadenza {
namespace {

constexpr size_t max_line_bytes = 2000;
constexpr size_t max_lines = 200;

}  // namespace

std::string printable_text(std::string_view text) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(std::min(text.size(), max_line_bytes * 4));
    size_t line_start = 0, lines = 1;
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c == '\n') {
            if (++lines > max_lines) {
                size_t rest = 1;
                for (size_t k = i + 1; k < text.size(); ++k) rest += text[k] == '\n';
                return out + "\n... (" + std::to_string(rest) + " more lines)";
            }
            out += '\n';
            line_start = i + 1;
            continue;
        }
        if (i - line_start == max_line_bytes) {
            const size_t end = text.find('\n', i);
            const size_t left = (end == std::string_view::npos ? text.size() : end) - i;
            out += " ... (" + std::to_string(left) + " more bytes)";
            if (end == std::string_view::npos) return out;
            i = end - 1;  // the newline comes next
            continue;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace cadenza
