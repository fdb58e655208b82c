#include "phone_alignment.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "replacing_file.h"

namespace cadenza::speech_corpus {

std::string phone_alignment_path(const std::string& wav_path) {
    return std::filesystem::path(wav_path).replace_extension(".phones").string();
}

void write_phone_alignment(const std::string& path, const std::vector<PhoneSegment>& segments) {
    file_output::ReplacingFile file(path);
    const std::string temporary = file.write_path().string();
    {
        std::ofstream output(temporary);
        char end[32];
        for (const auto& segment : segments) {
            std::snprintf(end, sizeof(end), "%.4f", segment.end_seconds);
            output << segment.phone << '\t' << end << '\n';
        }
        if (!output.flush()) throw std::runtime_error(temporary + ": cannot write the phone alignment");
    }
    file.commit();
}

std::vector<PhoneSegment> read_phone_alignment(const std::string& path) {
    std::ifstream input(path);
    if (!input) throw std::runtime_error(path + ": cannot open the phone alignment");
    std::vector<PhoneSegment> segments;
    std::string line;
    for (int number = 1; std::getline(input, line); ++number) {
        if (line.empty()) continue;
        const size_t tab = line.find('\t');
        const std::string where = path + ":" + std::to_string(number) + ": ";
        if (tab == std::string::npos || tab == 0) throw std::runtime_error(where + "expected 'phone<TAB>end seconds'");
        PhoneSegment segment{line.substr(0, tab), 0.0};
        try {
            size_t used = 0;
            segment.end_seconds = std::stod(line.substr(tab + 1), &used);
            if (used != line.size() - tab - 1) throw std::invalid_argument("trailing text");
        } catch (const std::exception&) {
            throw std::runtime_error(where + "the end time '" + line.substr(tab + 1) + "' is not a number");
        }
        if (!segments.empty() && segment.end_seconds < segments.back().end_seconds)
            throw std::runtime_error(where + "the end time goes backwards");
        segments.push_back(std::move(segment));
    }
    return segments;
}

std::vector<PhoneSegment> to_corpus_timeline(const std::vector<PhoneSegment>& synthesized, double playback_speed,
                                             double trim_begin_seconds, double duration_seconds) {
    std::vector<PhoneSegment> moved = synthesized;
    for (auto& segment : moved)
        segment.end_seconds =
            std::clamp(segment.end_seconds / playback_speed - trim_begin_seconds, 0.0, duration_seconds);
    return moved;
}

std::vector<PhoneSegment> parse_festival_segments(const std::string& text, const std::string& where) {
    std::vector<PhoneSegment> segments;
    std::istringstream lines(text);
    std::string line;
    bool body = false;
    for (int number = 1; std::getline(lines, line); ++number) {
        if (!body) {
            body = line.rfind('#', 0) == 0;
            continue;
        }
        if (line.empty()) continue;
        std::istringstream fields(line);
        PhoneSegment segment;
        int colour = 0;
        if (!(fields >> segment.end_seconds >> colour >> segment.phone))
            throw std::runtime_error(where + ":" + std::to_string(number) + ": expected 'end 100 phone'");
        segments.push_back(std::move(segment));
    }
    if (!body) throw std::runtime_error(where + ": no '#' line: not festival's segment file");
    return segments;
}

}  // namespace cadenza::speech_corpus
