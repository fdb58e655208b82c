// A frontend vocabulary file: UTF-8, one symbol per line, the id of a symbol
// is its zero-based line number. Special lines: <pad>, <bos>, <eos>, <unk>,
// and <space> for the space character. Empty lines and duplicate symbols are
// errors.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cadenza::frontend {

class Vocabulary {
public:
    // Reads the file. Throws sdk::Error naming the file (and the line for
    // a format error): NOT_FOUND, IO_ERROR or INVALID_CONFIG.
    static Vocabulary load(const std::string& path);

    // Parses file contents; `source` names them in error messages.
    static Vocabulary parse(std::string_view contents, const std::string& source);

    int32_t size() const { return static_cast<int32_t>(symbols_.size()); }
    const std::string& source() const { return source_; }

    // The line as written in the file ("a", "<space>", "<eos>").
    const std::string& symbol(int32_t id) const { return symbols_.at(static_cast<size_t>(id)); }

    // symbol(id), or sdk::Error(INVALID_ARGUMENT) naming an id outside the vocabulary.
    const std::string& checked_symbol(int32_t id) const;

    // The id of a symbol as written in the file, or -1.
    int32_t find(std::string_view symbol) const;

    // The id of a line holding exactly this code point, or -1. The space
    // character (U+0020) is looked up as <space>.
    int32_t find_code_point(char32_t code_point) const;

    // -1 when the vocabulary has no such line.
    int32_t pad_id() const { return pad_id_; }
    int32_t bos_id() const { return bos_id_; }
    int32_t eos_id() const { return eos_id_; }
    int32_t unk_id() const { return unk_id_; }
    int32_t space_id() const { return space_id_; }

private:
    std::string source_;
    std::vector<std::string> symbols_;
    std::unordered_map<std::string, int32_t> ids_;
    std::unordered_map<char32_t, int32_t> code_point_ids_;
    int32_t pad_id_ = -1;
    int32_t bos_id_ = -1;
    int32_t eos_id_ = -1;
    int32_t unk_id_ = -1;
    int32_t space_id_ = -1;
};

}  // namespace cadenza::frontend
