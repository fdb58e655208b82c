#pragma once
// The manifest of a speech corpus: one utterance per line of a TSV file with a
// header, `id split voice variation duration_s path text`. Paths are relative
// to the manifest's directory. Format: docs/formats.md.
#include <string>
#include <vector>

namespace cadenza::speech_corpus {

struct Utterance {
    std::string id;         // unique in the corpus
    std::string split;      // train, dev or test
    std::string voice;      // e.g. flite.slt, festival.kal_diphone
    std::string variation;  // e.g. r0.90-p1.05: speaking-rate and pitch factors
    double duration_seconds = 0.0;
    std::string path;       // absolute after reading; relative in the file
    std::string text;       // normalized: words only, no digits or symbols
};

// Throws std::runtime_error "path:line: reason" on a malformed line, an
// unknown split, a duplicate id or a missing header.
std::vector<Utterance> read_corpus_manifest(const std::string& path);

// The tab-separated fields of one line of a manifest-like TSV file.
std::vector<std::string> split_tab_fields(const std::string& line);

// Writes atomically (temporary file, then rename); paths are written relative
// to the manifest's directory.
void write_corpus_manifest(const std::string& path, const std::vector<Utterance>& utterances);

// The utterances of one split, in manifest order.
std::vector<Utterance> select_split(const std::vector<Utterance>& utterances, const std::string& split);

}  // namespace cadenza::speech_corpus
