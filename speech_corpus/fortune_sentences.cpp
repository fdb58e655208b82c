#include "fortune_sentences.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace cadenza::speech_corpus {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || is_upper(c); }

std::string trim(const std::string& text) {
    size_t begin = 0, end = text.size();
    while (begin < end && is_space(text[begin])) ++begin;
    while (end > begin && is_space(text[end - 1])) --end;
    return text.substr(begin, end - begin);
}

bool starts_with(const std::string& text, std::string_view prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

// "-- Mark Twain" or, in UTF-8 copies, an em dash.
bool is_attribution(const std::string& trimmed) {
    return starts_with(trimmed, "--") || starts_with(trimmed, "\xE2\x80\x94") || starts_with(trimmed, "\xE2\x80\x93");
}

// The length of a leading speaker label ("A:", "Pee Wee:", "Dr. Smith:"):
// one to three words, the first capitalized, then a colon and a space.
size_t speaker_label_length(const std::string& trimmed) {
    size_t i = 0;
    int words = 0;
    if (trimmed.empty() || !is_upper(trimmed[0])) return 0;
    while (i < trimmed.size()) {
        const size_t start = i;
        while (i < trimmed.size() && (is_letter(trimmed[i]) || trimmed[i] == '.' || trimmed[i] == '\'')) ++i;
        if (i == start) return 0;
        ++words;
        if (i < trimmed.size() && trimmed[i] == ':') {
            if (i + 1 < trimmed.size() && !is_space(trimmed[i + 1])) return 0;  // "10:30", "http:"
            i += 1;
            while (i < trimmed.size() && is_space(trimmed[i])) ++i;
            return i;
        }
        if (words == 3 || i >= trimmed.size() || trimmed[i] != ' ') return 0;
        ++i;
    }
    return 0;
}

bool ends_sentence(const std::string& text) {
    size_t end = text.size();
    while (end > 0 && std::string_view("\"')]*_").find(text[end - 1]) != std::string_view::npos) --end;
    return end > 0 && std::string_view(".?!:").find(text[end - 1]) != std::string_view::npos;
}

// The token without its opening and closing quotes and brackets.
std::string bare_token(const std::string& token) {
    size_t begin = 0, end = token.size();
    while (begin < end && std::string_view("\"'`([{*_").find(token[begin]) != std::string_view::npos) ++begin;
    while (end > begin && std::string_view("\"'`)]}*_").find(token[end - 1]) != std::string_view::npos) --end;
    return token.substr(begin, end - begin);
}

bool starts_new_sentence(const std::string& token) {
    const std::string bare = bare_token(token);
    return !bare.empty() && (is_upper(bare[0]) || is_digit(bare[0]));
}

}  // namespace

std::vector<std::string> fortune_entries(const std::string& file_text) {
    std::vector<std::string> entries;
    std::string current;
    std::istringstream lines(file_text);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "%") {
            if (!trim(current).empty()) entries.push_back(current);
            current.clear();
        } else {
            current += line;
            current += '\n';
        }
    }
    if (!trim(current).empty()) entries.push_back(current);
    return entries;
}

std::vector<std::string> fortune_paragraphs(const std::string& entry) {
    std::vector<std::string> paragraphs;
    std::string current;
    const auto finish = [&] {
        if (!current.empty()) paragraphs.push_back(current);
        current.clear();
    };
    bool in_attribution = false;
    std::istringstream lines(entry);
    std::string line;
    while (std::getline(lines, line)) {
        std::string text = trim(line);
        const bool indented = !line.empty() && is_space(line[0]);
        if (text.empty()) {
            in_attribution = false;
            finish();
            continue;
        }
        if (is_attribution(text)) {
            in_attribution = true;
            finish();
            continue;
        }
        // An attribution continues on the indented lines after it.
        if (in_attribution && indented) continue;
        in_attribution = false;
        if (const size_t label = speaker_label_length(text); label > 0) {
            finish();
            text = trim(text.substr(label));
            if (text.empty()) continue;
        } else if (indented && ends_sentence(current)) {
            finish();
        }
        if (!current.empty()) current += ' ';
        current += text;
    }
    finish();
    return paragraphs;
}

std::vector<std::string> split_sentences(const std::string& paragraph) {
    std::vector<std::string> tokens;
    std::istringstream words(paragraph);
    for (std::string token; words >> token;) tokens.push_back(token);

    std::vector<std::string> sentences;
    std::string current;
    for (size_t i = 0; i < tokens.size(); ++i) {
        if (!current.empty()) current += ' ';
        current += tokens[i];
        const std::string bare = bare_token(tokens[i]);
        if (bare.empty()) continue;
        const char last = bare.back();
        if (last != '.' && last != '?' && last != '!') continue;
        if (last == '.' && is_non_terminal_abbreviation(bare)) continue;
        if (i + 1 < tokens.size() && !starts_new_sentence(tokens[i + 1])) continue;
        sentences.push_back(current);
        current.clear();
    }
    if (!current.empty()) sentences.push_back(current);
    return sentences;
}

std::vector<std::string> fortune_files(const std::string& directory) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(directory)) throw std::invalid_argument(directory + ": no such directory of fortune files");
    std::vector<std::string> files;
    for (const auto& item : fs::directory_iterator(directory)) {
        if (!item.is_regular_file()) continue;
        const std::string extension = item.path().extension().string();
        if (extension == ".dat" || extension == ".u8") continue;
        files.push_back(item.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

SentenceExtraction extract_fortune_sentences(const std::vector<std::string>& files, int min_words, int max_words) {
    SentenceExtraction extraction;
    std::unordered_set<std::string> seen;
    for (const auto& path : files) {
        std::ifstream input(path, std::ios::binary);
        if (!input) throw std::runtime_error(path + ": cannot read the fortune file");
        std::ostringstream content;
        content << input.rdbuf();
        ++extraction.files;
        for (const auto& entry : fortune_entries(content.str())) {
            ++extraction.entries;
            for (const auto& paragraph : fortune_paragraphs(entry)) {
                for (const auto& sentence : split_sentences(paragraph)) {
                    ++extraction.candidates;
                    auto normalized = normalize_sentence(sentence);
                    if (!normalized) {
                        ++extraction.unreadable;
                    } else if (normalized->words < min_words || normalized->words > max_words) {
                        ++extraction.wrong_length;
                    } else if (!seen.insert(normalized->text).second) {
                        ++extraction.duplicates;
                    } else {
                        extraction.sentences.push_back(std::move(*normalized));
                    }
                }
            }
        }
    }
    return extraction;
}

}  // namespace cadenza::speech_corpus
