#include "corpus_manifest.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "replacing_file.h"

namespace cadenza::speech_corpus {
namespace {

const char* const header = "id\tsplit\tvoice\tvariation\tduration_s\tpath\ttext";


}  // namespace

std::vector<Utterance> read_corpus_manifest(const std::string& path) {
    std::ifstream input(path);
    if (!input) throw std::runtime_error(path + ": cannot open the corpus manifest");
    const std::filesystem::path directory = std::filesystem::absolute(path).parent_path();
    std::string line;
    if (!std::getline(input, line) || line != header)
        throw std::runtime_error(path + ":1: the header must be `" + std::string(header) + "` (tab-separated)");
    std::vector<Utterance> utterances;
    std::unordered_set<std::string> ids;
    for (int number = 2; std::getline(input, line); ++number) {
        if (line.empty()) continue;
        const std::string where = path + ":" + std::to_string(number) + ": ";
        const auto fields = split_tab_fields(line);
        if (fields.size() != 7)
            throw std::runtime_error(where + "expected 7 tab-separated fields, found " + std::to_string(fields.size()));
        Utterance u;
        u.id = fields[0];
        u.split = fields[1];
        u.voice = fields[2];
        u.variation = fields[3];
        u.text = fields[6];
        if (u.id.empty()) throw std::runtime_error(where + "empty id");
        if (!ids.insert(u.id).second) throw std::runtime_error(where + "duplicate id '" + u.id + "'");
        if (u.split != "train" && u.split != "dev" && u.split != "test")
            throw std::runtime_error(where + "split must be train, dev or test, not '" + u.split + "'");
        try {
            size_t used = 0;
            u.duration_seconds = std::stod(fields[4], &used);
            if (used != fields[4].size() || !(u.duration_seconds >= 0.0)) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw std::runtime_error(where + "duration_s must be a non-negative number, not '" + fields[4] + "'");
        }
        if (fields[5].empty()) throw std::runtime_error(where + "empty path");
        u.path = (directory / fields[5]).lexically_normal().string();
        if (u.text.empty()) throw std::runtime_error(where + "empty text");
        utterances.push_back(std::move(u));
    }
    return utterances;
}

void write_corpus_manifest(const std::string& path, const std::vector<Utterance>& utterances) {
    const std::filesystem::path directory = std::filesystem::absolute(path).parent_path();
    file_output::ReplacingFile file(path);
    {
        std::ofstream output(file.write_path());
        if (!output) throw std::runtime_error(path + ": cannot write the corpus manifest");
        output << header << '\n';
        for (const auto& u : utterances) {
            for (const std::string* field : {&u.id, &u.split, &u.voice, &u.variation, &u.text})
                if (field->find_first_of("\t\n") != std::string::npos)
                    throw std::runtime_error(path + ": utterance '" + u.id + "' has a tab or newline in a field");
            const std::string relative = std::filesystem::absolute(u.path).lexically_relative(directory).string();
            char duration[32];
            std::snprintf(duration, sizeof(duration), "%.3f", u.duration_seconds);
            output << u.id << '\t' << u.split << '\t' << u.voice << '\t' << u.variation << '\t' << duration << '\t'
                   << relative << '\t' << u.text << '\n';
        }
        if (!output.flush()) throw std::runtime_error(path + ": writing the corpus manifest failed");
    }
    file.commit();
}

std::vector<Utterance> select_split(const std::vector<Utterance>& utterances, const std::string& split) {
    std::vector<Utterance> selected;
    for (const auto& u : utterances)
        if (u.split == split) selected.push_back(u);
    return selected;
}

std::vector<std::string> split_tab_fields(const std::string& line) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (;;) {
        const size_t tab = line.find('\t', start);
        fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
        if (tab == std::string::npos) return fields;
        start = tab + 1;
    }
}

}  // namespace cadenza::speech_corpus
