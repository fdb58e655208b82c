#include "error_rate.h"

#include <algorithm>

namespace cadenza::recognition {
namespace {

// UTF-8 to code points; a byte that does not start a valid sequence stands
// for itself (as Latin-1), so that nothing is silently dropped.
std::u32string decode_utf8(const std::string& text) {
    std::u32string decoded;
    decoded.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const int length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
        char32_t code = length == 1 ? lead : length == 2 ? lead & 0x1F : length == 3 ? lead & 0x0F : lead & 0x07;
        bool valid = length > 0 && i + length <= text.size();
        for (int k = 1; valid && k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            valid = (next & 0xC0) == 0x80;
            code = (code << 6) | (next & 0x3F);
        }
        if (valid) {
            decoded.push_back(code);
            i += static_cast<size_t>(length);
        } else {
            decoded.push_back(lead);
            ++i;
        }
    }
    return decoded;
}

std::string encode_utf8(const std::u32string& text) {
    std::string encoded;
    encoded.reserve(text.size());
    for (const char32_t c : text) {
        if (c < 0x80) {
            encoded.push_back(static_cast<char>(c));
        } else if (c < 0x800) {
            encoded.push_back(static_cast<char>(0xC0 | (c >> 6)));
            encoded.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        } else if (c < 0x10000) {
            encoded.push_back(static_cast<char>(0xE0 | (c >> 12)));
            encoded.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
            encoded.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        } else {
            encoded.push_back(static_cast<char>(0xF0 | (c >> 18)));
            encoded.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
            encoded.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
            encoded.push_back(static_cast<char>(0x80 | (c & 0x3F)));
        }
    }
    return encoded;
}

bool is_apostrophe(char32_t c) { return c == U'\'' || c == U'\u2019'; }

// Whitespace and punctuation: ASCII, Latin-1's and the General Punctuation
// block (dashes, curly quotes, ellipsis, special spaces).
bool is_separator(char32_t c) {
    if (c < 0x80) return !((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9'));
    if (c == 0xA0 || c == 0xA1 || c == 0xAB || c == 0xB7 || c == 0xBB || c == 0xBF) return true;
    return c >= 0x2000 && c <= 0x206F;
}

bool is_word_character(char32_t c) { return !is_separator(c) && !is_apostrophe(c); }

}  // namespace

double EditCounts::rate() const {
    if (reference_length == 0) return errors() > 0 ? 1.0 : 0.0;
    return static_cast<double>(errors()) / static_cast<double>(reference_length);
}

EditCounts& EditCounts::operator+=(const EditCounts& other) {
    substitutions += other.substitutions;
    deletions += other.deletions;
    insertions += other.insertions;
    reference_length += other.reference_length;
    return *this;
}

std::string normalize_for_scoring(const std::string& text) {
    const std::u32string decoded = decode_utf8(text);
    std::u32string normalized;
    normalized.reserve(decoded.size());
    bool pending_space = false;
    for (size_t i = 0; i < decoded.size(); ++i) {
        char32_t c = decoded[i];
        const bool inside_word = i > 0 && i + 1 < decoded.size() && is_word_character(decoded[i - 1]) &&
                                 is_word_character(decoded[i + 1]);
        if (is_apostrophe(c) && inside_word) {
            c = U'\'';
        } else if (is_separator(c) || is_apostrophe(c)) {
            pending_space = !normalized.empty();
            continue;
        } else if (c >= U'A' && c <= U'Z') {
            c = c - U'A' + U'a';
        }
        if (pending_space) normalized.push_back(U' ');
        pending_space = false;
        normalized.push_back(c);
    }
    return encode_utf8(normalized);
}

std::vector<std::string> split_words(const std::string& normalized) {
    std::vector<std::string> words;
    size_t start = 0;
    while (start < normalized.size()) {
        size_t end = normalized.find(' ', start);
        if (end == std::string::npos) end = normalized.size();
        if (end > start) words.push_back(normalized.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

template <typename Unit>
EditCounts align(const std::vector<Unit>& reference, const std::vector<Unit>& hypothesis) {
    // Costs compare by (errors, substitutions). Two rows of costs are kept,
    // and one move per cell for the backtrace; among equal costs the diagonal
    // is preferred, then a deletion, then an insertion.
    struct Cost {
        int64_t errors = 0, substitutions = 0;
        bool operator<(const Cost& other) const {
            return errors != other.errors ? errors < other.errors : substitutions < other.substitutions;
        }
    };
    enum Move : unsigned char { diagonal_move, deletion_move, insertion_move };
    const size_t rows = reference.size() + 1, columns = hypothesis.size() + 1;
    std::vector<unsigned char> moves(rows * columns, diagonal_move);
    std::vector<Cost> previous(columns), current(columns);
    for (size_t j = 1; j < columns; ++j) {
        previous[j] = {static_cast<int64_t>(j), 0};
        moves[j] = insertion_move;
    }
    for (size_t i = 1; i < rows; ++i) {
        current[0] = {static_cast<int64_t>(i), 0};
        moves[i * columns] = deletion_move;
        for (size_t j = 1; j < columns; ++j) {
            Cost best = previous[j - 1];
            if (!(reference[i - 1] == hypothesis[j - 1])) ++best.errors, ++best.substitutions;
            unsigned char move = diagonal_move;
            Cost deletion = previous[j];
            ++deletion.errors;
            if (deletion < best) best = deletion, move = deletion_move;
            Cost insertion = current[j - 1];
            ++insertion.errors;
            if (insertion < best) best = insertion, move = insertion_move;
            current[j] = best;
            moves[i * columns + j] = move;
        }
        std::swap(previous, current);
    }

    EditCounts counts;
    counts.reference_length = static_cast<int64_t>(reference.size());
    size_t i = rows - 1, j = columns - 1;
    while (i > 0 || j > 0) {
        switch (moves[i * columns + j]) {
            case diagonal_move:
                if (!(reference[i - 1] == hypothesis[j - 1])) ++counts.substitutions;
                --i, --j;
                break;
            case deletion_move:
                ++counts.deletions;
                --i;
                break;
            default:
                ++counts.insertions;
                --j;
        }
    }
    return counts;
}

template EditCounts align(const std::vector<std::string>&, const std::vector<std::string>&);
template EditCounts align(const std::vector<char32_t>&, const std::vector<char32_t>&);

EditCounts word_errors(const std::string& reference, const std::string& hypothesis) {
    return align(split_words(normalize_for_scoring(reference)), split_words(normalize_for_scoring(hypothesis)));
}

EditCounts character_errors(const std::string& reference, const std::string& hypothesis) {
    const std::u32string r = decode_utf8(normalize_for_scoring(reference));
    const std::u32string h = decode_utf8(normalize_for_scoring(hypothesis));
    return align(std::vector<char32_t>(r.begin(), r.end()), std::vector<char32_t>(h.begin(), h.end()));
}

}  // namespace cadenza::recognition
