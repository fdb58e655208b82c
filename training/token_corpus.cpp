#include "token_corpus.h"

#include <cmath>
#include <fstream>
#include <istream>
#include <numeric>
#include <sstream>

#include "error.h"
#include "random_bits.h"
#include "replacing_file.h"

namespace cadenza::training {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

[[noreturn]] void fail(const std::string& name, int64_t line, const std::string& message) {
    throw Error(CDZ_STATUS_INVALID_ARGUMENT, name + ":" + std::to_string(line) + ": " + message);
}

std::string shortened(const std::string& word) { return word.size() <= 40 ? word : word.substr(0, 37) + "..."; }

}  // namespace

int64_t TokenCorpus::token_count() const {
    int64_t count = 0;
    for (const auto& s : sequences) count += static_cast<int64_t>(s.tokens.size());
    return count;
}

int64_t TokenCorpus::target_token_count() const {
    int64_t count = 0;
    for (const auto& s : sequences) count += s.target_length();
    return count;
}

int32_t TokenCorpus::max_token() const {
    int32_t largest = -1;
    for (const auto& s : sequences)
        for (int32_t token : s.tokens) largest = std::max(largest, token);
    return largest;
}

uint64_t TokenCorpus::fingerprint() const {
    uint64_t hash = 0xcbf29ce484222325ull;
    auto mix = [&](uint64_t value) {
        for (int byte = 0; byte < 8; ++byte) {
            hash ^= (value >> (8 * byte)) & 0xff;
            hash *= 0x100000001b3ull;
        }
    };
    mix(sequences.size());
    for (const auto& s : sequences) {
        mix(s.tokens.size());
        mix(static_cast<uint64_t>(s.prompt_length));
        for (int32_t token : s.tokens) mix(static_cast<uint32_t>(token));
    }
    return hash;
}

std::string TokenCorpus::where(const TokenSequence& sequence) const {
    return name + ":" + std::to_string(sequence.line);
}

void TokenCorpus::check_vocabulary(int64_t vocab_size, const std::string& model) const {
    for (const auto& s : sequences)
        for (int32_t token : s.tokens)
            if (token >= vocab_size)
                throw Error(CDZ_STATUS_INVALID_ARGUMENT, where(s) + ": token " + std::to_string(token) +
                                                             " is outside the vocabulary of " + model + " (" +
                                                             std::to_string(vocab_size) + " tokens)");
}

TokenCorpus parse_token_corpus(std::istream& in, const std::string& name) {
    TokenCorpus corpus;
    corpus.name = name;
    std::string text;
    int64_t line_number = 0;
    while (std::getline(in, text)) {
        ++line_number;
        TokenSequence sequence;
        sequence.line = line_number;
        bool separated = false;
        size_t i = 0;
        while (i < text.size()) {
            if (is_space(text[i])) {
                ++i;
                continue;
            }
            size_t end = i;
            while (end < text.size() && !is_space(text[end]) && text[end] != '|') ++end;
            if (end == i) {  // a '|'
                if (separated) fail(name, line_number, "a second '|' (a line is `prompt_ids | target_ids`)");
                separated = true;
                sequence.prompt_length = static_cast<int64_t>(sequence.tokens.size());
                ++i;
                continue;
            }
            const std::string word = text.substr(i, end - i);
            uint64_t value = 0;
            bool valid = true;
            for (char c : word) {
                if (c < '0' || c > '9') {
                    valid = false;
                    break;
                }
                value = value * 10 + static_cast<uint64_t>(c - '0');
                if (value > 0x7fffffffull) {
                    valid = false;
                    break;
                }
            }
            if (!valid) {
                const bool digits = word.find_first_not_of("0123456789") == std::string::npos;
                fail(name, line_number,
                     digits ? "token '" + shortened(word) + "' is too large (at most 2147483647)"
                            : "malformed token '" + shortened(word) + "' (tokens are non-negative decimal integers)");
            }
            sequence.tokens.push_back(static_cast<int32_t>(value));
            i = end;
        }
        if (sequence.tokens.empty() && !separated) continue;  // a blank line
        if (sequence.target_length() == 0)
            fail(name, line_number, "no target tokens (after the '|') to train on");
        corpus.sequences.push_back(std::move(sequence));
    }
    if (in.bad()) throw Error(CDZ_STATUS_IO_ERROR, name + ": read error");
    if (corpus.sequences.empty()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, name + ": no sequences (the file is empty)");
    return corpus;
}

TokenCorpus load_token_corpus(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(CDZ_STATUS_NOT_FOUND, path.string() + ": cannot open the token corpus");
    return parse_token_corpus(in, path.string());
}

std::string format_sequence(const TokenSequence& sequence) {
    std::string line;
    line.reserve(sequence.tokens.size() * 5 + 2);
    for (size_t i = 0; i < sequence.tokens.size(); ++i) {
        if (static_cast<int64_t>(i) == sequence.prompt_length && sequence.prompt_length > 0) line += "| ";
        line += std::to_string(sequence.tokens[i]);
        if (i + 1 < sequence.tokens.size()) line += ' ';
    }
    return line;
}

void write_token_corpus(const std::filesystem::path& path, const std::vector<TokenSequence>& sequences) {
    try {
        file_output::ReplacingFile output(path);
        const std::filesystem::path& temporary = output.write_path();
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out) throw Error(CDZ_STATUS_IO_ERROR, temporary.string() + ": cannot write");
        for (const auto& sequence : sequences) out << format_sequence(sequence) << '\n';
        out.flush();
        if (!out) throw Error(CDZ_STATUS_IO_ERROR, temporary.string() + ": write error");
        out.close();
        output.commit();
    } catch (const file_output::OutputFileError& error) {
        throw Error(CDZ_STATUS_IO_ERROR, error.what());
    }
}

CorpusSplit split_corpus(const TokenCorpus& corpus, double heldout_fraction, uint64_t seed) {
    if (!(heldout_fraction >= 0.0 && heldout_fraction < 1.0))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the held-out fraction must be in [0, 1)");
    const size_t n = corpus.sequences.size();
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t{0});
    SplitMix64 random(seed ^ 0x5eed0fc0ffee0001ull);
    for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
    size_t heldout = static_cast<size_t>(std::llround(heldout_fraction * static_cast<double>(n)));
    if (heldout_fraction > 0 && n >= 2) heldout = std::max<size_t>(heldout, 1);
    heldout = std::min(heldout, n > 0 ? n - 1 : 0);
    CorpusSplit split;
    std::vector<bool> is_heldout(n, false);
    for (size_t i = 0; i < heldout; ++i) is_heldout[order[i]] = true;
    // In file order, so that the split does not reorder either part.
    for (size_t i = 0; i < n; ++i) (is_heldout[i] ? split.heldout : split.train).push_back(&corpus.sequences[i]);
    return split;
}

}  // namespace cadenza::training
