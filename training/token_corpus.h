// The token corpus of the training tools: plain text, one sequence per line,
// `prompt_ids | target_ids` (see docs/training.md). The prompt (text, or an
// acoustic prompt) conditions the model and is not trained on; the target
// segment is. A line without `|` is all target. No LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace cadenza::training {

struct TokenSequence {
    std::vector<int32_t> tokens;  // the prompt's tokens, then the target's
    int64_t prompt_length = 0;    // how many of `tokens` are prompt
    int64_t line = 0;             // 1-based line in its file (0: not from a file)

    int64_t target_length() const { return static_cast<int64_t>(tokens.size()) - prompt_length; }
};

struct TokenCorpus {
    std::string name;  // the file, for messages
    std::vector<TokenSequence> sequences;

    int64_t token_count() const;         // prompt and target tokens
    int64_t target_token_count() const;  // target tokens
    int32_t max_token() const;           // -1 when empty
    // FNV-1a over every sequence (tokens and prompt lengths): a resumed run
    // checks that it sees the same corpus.
    uint64_t fingerprint() const;
    // "FILE:LINE" of a sequence.
    std::string where(const TokenSequence& sequence) const;
    // Throws cadenza::Error naming FILE:LINE of the first token >= vocab_size.
    void check_vocabulary(int64_t vocab_size, const std::string& model) const;
};

// Reads a corpus. Blank lines are skipped; `\r\n` ends are accepted. Throws
// cadenza::Error "NAME:LINE: ..." on a malformed token, a second `|`, a line
// without target tokens, or no sequence at all.
TokenCorpus parse_token_corpus(std::istream& in, const std::string& name);
TokenCorpus load_token_corpus(const std::filesystem::path& path);

// One line of the format (without the newline).
std::string format_sequence(const TokenSequence& sequence);
// Writes the sequences, one per line, through a temporary file and a rename.
void write_token_corpus(const std::filesystem::path& path, const std::vector<TokenSequence>& sequences);

// The corpus split into training and held-out sequences: a seeded shuffle of
// the sequence indices, the first round(fraction * N) held out (at least one
// when fraction > 0 and N >= 2, never all). The same corpus, fraction and
// seed give the same split, whatever is trained.
struct CorpusSplit {
    std::vector<const TokenSequence*> train;
    std::vector<const TokenSequence*> heldout;
};
CorpusSplit split_corpus(const TokenCorpus& corpus, double heldout_fraction, uint64_t seed);

}  // namespace cadenza::training
