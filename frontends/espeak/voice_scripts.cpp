#include "voice_scripts.h"

#include <algorithm>
#include <initializer_list>

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend::espeak {

struct CodeRange {
    char32_t first;
    char32_t last;
};

struct Script {
    const char* name;
    std::initializer_list<const char*> languages;  // primary language subtags written in it
    std::initializer_list<CodeRange> ranges;
};

namespace {

// Every voice: ASCII (controls aside: the core refuses them), Latin-1's
// punctuation and symbols, general punctuation, super- and subscripts,
// currency, letterlike symbols, number forms, arrows and mathematical
// operators.
const std::initializer_list<CodeRange> common_ranges = {
    {0x09, 0x0A}, {0x0D, 0x0D}, {0x20, 0x7E}, {0xA0, 0xBF}, {0xD7, 0xD7}, {0xF7, 0xF7}, {0x2000, 0x22FF},
};

const Script latin{"Latin", {}, {{0xC0, 0x24F}, {0x250, 0x2FF}, {0x300, 0x36F}, {0x1E00, 0x1EFF}}};

// Scripts espeak-ng has voices for, by the ISO 639 codes of those voices.
const Script other_scripts[] = {
    {"Greek", {"el", "grc"}, {{0x370, 0x3FF}, {0x1F00, 0x1FFF}}},
    {"Cyrillic", {"ru", "uk", "be", "bg", "mk", "sr", "ba", "cv", "kk", "ky", "tt", "mn"}, {{0x400, 0x52F}}},
    {"Armenian", {"hy", "hyw"}, {{0x530, 0x58F}}},
    {"Hebrew", {"he"}, {{0x590, 0x5FF}}},
    {"Arabic", {"ar", "fa", "ur", "ps", "sd", "ug"}, {{0x600, 0x6FF}, {0x750, 0x77F}, {0xFB50, 0xFDFF}, {0xFE70, 0xFEFF}}},
    {"Devanagari", {"hi", "mr", "ne", "sa", "kok", "mai"}, {{0x900, 0x97F}}},
    {"Bengali", {"bn", "as", "bpy"}, {{0x980, 0x9FF}}},
    {"Gurmukhi", {"pa"}, {{0xA00, 0xA7F}}},
    {"Gujarati", {"gu"}, {{0xA80, 0xAFF}}},
    {"Oriya", {"or"}, {{0xB00, 0xB7F}}},
    {"Tamil", {"ta"}, {{0xB80, 0xBFF}}},
    {"Telugu", {"te"}, {{0xC00, 0xC7F}}},
    {"Kannada", {"kn"}, {{0xC80, 0xCFF}}},
    {"Malayalam", {"ml"}, {{0xD00, 0xD7F}}},
    {"Sinhala", {"si"}, {{0xD80, 0xDFF}}},
    {"Thai", {"th"}, {{0xE00, 0xE7F}}},
    {"Lao", {"lo"}, {{0xE80, 0xEFF}}},
    {"Myanmar", {"my"}, {{0x1000, 0x109F}}},
    {"Georgian", {"ka"}, {{0x10A0, 0x10FF}}},
    // The modern jamo only: 1.51 reads freed memory on the archaic ones.
    {"Hangul", {"ko"}, {{0x1100, 0x117F}, {0x11A8, 0x11C2}, {0x3130, 0x318F}, {0xAC00, 0xD7A3}}},
    {"Ethiopic", {"am"}, {{0x1200, 0x139F}}},
    {"Han and kana", {"cmn", "yue", "hak", "ja", "zh"}, {{0x3000, 0x30FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}}},
};

bool in_ranges(char32_t code_point, std::initializer_list<CodeRange> ranges) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const CodeRange& range) { return code_point >= range.first && code_point <= range.last; });
}

std::string primary_subtag(const std::string& language) {
    std::string subtag = language.substr(0, language.find_first_of("-_"));
    std::transform(subtag.begin(), subtag.end(), subtag.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
    return subtag;
}

}  // namespace

VoiceScripts VoiceScripts::for_language(const std::string& language) {
    VoiceScripts scripts;
    scripts.language_ = language;
    scripts.scripts_.push_back(&latin);
    const std::string subtag = primary_subtag(language);
    for (const Script& script : other_scripts)
        if (std::find(script.languages.begin(), script.languages.end(), subtag) != script.languages.end())
            scripts.scripts_.push_back(&script);
    return scripts;
}

void VoiceScripts::check(const std::u32string& code_points) const {
    for (size_t i = 0; i < code_points.size(); ++i) {
        const char32_t c = code_points[i];
        if (in_ranges(c, common_ranges) ||
            std::any_of(scripts_.begin(), scripts_.end(), [&](const Script* s) { return in_ranges(c, s->ranges); }))
            continue;
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                            "the text has " + describe_code_point(c) + " (character " + std::to_string(i + 1) +
                                "), which is not in the scripts of the espeak-ng voice's language \"" + language_ +
                                "\" (" + names() +
                                "); frontend.espeak passes espeak-ng only those, digits, punctuation and common "
                                "symbols, because espeak-ng 1.51 reads freed memory on some characters of other "
                                "scripts");
    }
}

std::string VoiceScripts::names() const {
    std::string joined;
    for (const Script* script : scripts_) joined += (joined.empty() ? "" : ", ") + std::string(script->name);
    return joined;
}

}  // namespace cadenza::frontend::espeak
