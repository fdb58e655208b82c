#include "text_to_speak.h"

#include "error.h"

namespace cadenza {
namespace {

constexpr int64_t bytes_per_position = 8;

// Blocks of punctuation, symbols, emoji and format characters: a code point
// outside ASCII and outside these is taken for a letter of some script.
bool is_symbol_or_punctuation(uint32_t c) {
    struct Block {
        uint32_t first, last;
    };
    static constexpr Block blocks[] = {
        {0x0080, 0x00BF},   {0x00D7, 0x00D7},   {0x00F7, 0x00F7},   {0x02B0, 0x036F},   {0x2000, 0x2BFF},
        {0x2E00, 0x2E7F},   {0x3000, 0x303F},   {0xD800, 0xF8FF},   {0xFE00, 0xFE0F},   {0xFE30, 0xFE4F},
        {0xFFF0, 0xFFFF},   {0x1F000, 0x1FBFF}, {0xE0000, 0xE0FFF}, {0xF0000, 0x10FFFF},
    };
    for (const Block& block : blocks)
        if (c >= block.first && c <= block.last) return true;
    return false;
}

bool is_letter_or_digit(uint32_t c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    return !is_symbol_or_punctuation(c);
}

// The next code point of UTF-8 text; a malformed byte reads as U+FFFD (a
// symbol) and moves on by one.
uint32_t next_code_point(const std::string& text, size_t& i) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    const int length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (length == 0 || i + length > text.size()) {
        ++i;
        return 0xFFFD;
    }
    uint32_t c = length == 1 ? lead : lead & (0x7F >> length);
    for (int k = 1; k < length; ++k) {
        if ((byte(i + k) & 0xC0) != 0x80) {
            ++i;
            return 0xFFFD;
        }
        c = (c << 6) | (byte(i + k) & 0x3F);
    }
    i += length;
    return c;
}

}  // namespace

void check_text_to_speak(const std::string& text, int64_t max_positions) {
    if (max_positions > 0 && static_cast<int64_t>(text.size()) > max_positions * bytes_per_position)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "the text is " + std::to_string(text.size()) + " bytes, more than this backbone's " +
                        std::to_string(max_positions) + " positions can ever hold (at most " +
                        std::to_string(max_positions * bytes_per_position) + " bytes); split it into sentences");
    for (size_t i = 0; i < text.size();)
        if (is_letter_or_digit(next_code_point(text, i))) return;
    throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                text.empty() ? std::string("the text is empty: nothing to say")
                             : "the text has no letter or digit: nothing to say (" + std::to_string(text.size()) +
                                   " bytes of punctuation, symbols or emoji)");
}

}  // namespace cadenza
