#include "vocabulary.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend {
namespace {

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

[[noreturn]] void fail_at(const std::string& source, size_t line, const std::string& what) {
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        "vocabulary " + source + ":" + std::to_string(line) + ": " + what);
}

// Checks one line and returns its code points.
std::u32string check_line(std::string_view line, const std::string& source, size_t number) {
    if (line.empty())
        fail_at(source, number, "empty line (each line holds one symbol; write <space> for the space character)");
    std::u32string code_points;
    if (const auto error = decode_utf8(line, code_points))
        fail_at(source, number, "invalid UTF-8 at byte " + std::to_string(error->offset) +
                                    " of the line: " + error->reason);
    for (const char32_t cp : code_points) {
        if (is_whitespace(cp))
            fail_at(source, number, "symbol contains whitespace " + describe_code_point(cp) +
                                        " (write <space> for the space character)");
        if (is_control(cp))
            fail_at(source, number, "symbol contains control character " + describe_code_point(cp));
    }
    return code_points;
}

}  // namespace

Vocabulary Vocabulary::load(const std::string& path) {
    std::error_code status_error;
    const auto status = std::filesystem::status(path, status_error);
    if (status.type() == std::filesystem::file_type::not_found)
        throw sdk::Error(CDZ_STATUS_NOT_FOUND, "vocabulary " + path + ": file not found");
    if (status.type() == std::filesystem::file_type::directory)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "vocabulary " + path + ": is a directory, not a file");
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        const int error = errno;
        throw sdk::Error(error == ENOENT ? CDZ_STATUS_NOT_FOUND : CDZ_STATUS_IO_ERROR,
                            "vocabulary " + path + ": cannot open: " + std::strerror(error));
    }
    std::string contents((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (file.bad()) throw sdk::Error(CDZ_STATUS_IO_ERROR, "vocabulary " + path + ": read error");
    return parse(contents, path);
}

Vocabulary Vocabulary::parse(std::string_view contents, const std::string& source) {
    Vocabulary vocabulary;
    vocabulary.source_ = source;
    if (contents.substr(0, utf8_bom.size()) == utf8_bom) contents.remove_prefix(utf8_bom.size());
    if (contents.empty())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "vocabulary " + source + ": the file has no symbols");

    // Every line ends with '\n' except maybe the last; a final '\n' does not
    // start another line. A '\r' before the '\n' is dropped.
    size_t start = 0;
    size_t number = 0;
    while (start < contents.size()) {
        ++number;
        size_t end = contents.find('\n', start);
        if (end == std::string_view::npos) end = contents.size();
        std::string_view line = contents.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        start = end + 1;

        const std::u32string code_points = check_line(line, source, number);
        if (vocabulary.symbols_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()))
            fail_at(source, number, "too many symbols for 32-bit ids");
        const auto id = static_cast<int32_t>(vocabulary.symbols_.size());
        std::string symbol(line);
        const auto [existing, inserted] = vocabulary.ids_.emplace(symbol, id);
        if (!inserted)
            fail_at(source, number, "duplicate symbol '" + symbol + "' (first on line " +
                                        std::to_string(existing->second + 1) + ")");

        if (symbol == "<pad>") vocabulary.pad_id_ = id;
        else if (symbol == "<bos>") vocabulary.bos_id_ = id;
        else if (symbol == "<eos>") vocabulary.eos_id_ = id;
        else if (symbol == "<unk>") vocabulary.unk_id_ = id;
        else if (symbol == "<space>") vocabulary.code_point_ids_[U' '] = vocabulary.space_id_ = id;
        else if (code_points.size() == 1) vocabulary.code_point_ids_[code_points[0]] = id;
        vocabulary.symbols_.push_back(std::move(symbol));
    }
    return vocabulary;
}

int32_t Vocabulary::find(std::string_view symbol) const {
    const auto found = ids_.find(std::string(symbol));
    return found == ids_.end() ? -1 : found->second;
}

int32_t Vocabulary::find_code_point(char32_t code_point) const {
    const auto found = code_point_ids_.find(code_point);
    return found == code_point_ids_.end() ? -1 : found->second;
}

const std::string& Vocabulary::checked_symbol(int32_t id) const {
    if (id < 0 || id >= size())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "token id " + std::to_string(id) +
                                                             " is outside the vocabulary (size " +
                                                             std::to_string(size()) + ")");
    return symbol(id);
}

}  // namespace cadenza::frontend
