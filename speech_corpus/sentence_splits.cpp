#include "sentence_splits.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "replacing_file.h"

namespace cadenza::speech_corpus {
namespace {

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

constexpr uint64_t split_buckets = 10000;
constexpr uint64_t test_buckets = 500;  // 5%
constexpr uint64_t dev_buckets = 300;   // 3%

}  // namespace

uint64_t sentence_hash(const std::string& text) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ULL;
    }
    return splitmix64(hash);
}

std::string split_of_hash(uint64_t hash) {
    // Its own mix of the hash, so that the split does not follow hash order.
    const uint64_t bucket = splitmix64(hash ^ 0x5eed5a17c0ffeeULL) % split_buckets;
    if (bucket < test_buckets) return "test";
    if (bucket < test_buckets + dev_buckets) return "dev";
    return "train";
}

std::vector<CorpusSentence> assign_splits(const std::vector<NormalizedSentence>& sentences) {
    std::vector<CorpusSentence> assigned;
    assigned.reserve(sentences.size());
    for (const auto& sentence : sentences) {
        CorpusSentence s;
        s.hash = sentence_hash(sentence.text);
        char id[16];
        std::snprintf(id, sizeof(id), "s%012llx", static_cast<unsigned long long>(s.hash >> 16));
        s.id = id;
        s.split = split_of_hash(s.hash);
        s.text = sentence.text;
        s.spoken = sentence.spoken;
        assigned.push_back(std::move(s));
    }
    std::sort(assigned.begin(), assigned.end(), [](const CorpusSentence& a, const CorpusSentence& b) {
        return a.hash != b.hash ? a.hash < b.hash : a.text < b.text;
    });
    std::vector<CorpusSentence> unique;
    std::unordered_set<std::string> ids;
    for (auto& s : assigned)
        if (ids.insert(s.id).second) unique.push_back(std::move(s));
    return unique;
}

std::vector<CorpusSentence> limit_per_split(const std::vector<CorpusSentence>& sentences, int per_split) {
    std::map<std::string, int> taken;
    std::vector<CorpusSentence> limited;
    for (const auto& s : sentences)
        if (taken[s.split]++ < per_split) limited.push_back(s);
    return limited;
}

void write_sentences_tsv(const std::string& path, const std::vector<CorpusSentence>& sentences) {
    file_output::ReplacingFile file(path);
    {
        std::ofstream output(file.write_path());
        if (!output) throw std::runtime_error(path + ": cannot write the sentence list");
        output << "id\tsplit\ttext\n";
        for (const auto& s : sentences) output << s.id << '\t' << s.split << '\t' << s.text << '\n';
        if (!output.flush()) throw std::runtime_error(path + ": writing the sentence list failed");
    }
    file.commit();
}

}  // namespace cadenza::speech_corpus
