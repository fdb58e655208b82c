// Symbols (one code point each, the space as <space>) to vocabulary ids,
// with the on_unknown policy and the optional <bos>/<eos> boundaries.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vocabulary.h"

namespace cadenza::frontend {

enum class UnknownPolicy {
    skip,   // <unk> when the vocabulary has it, otherwise dropped
    error,  // encode fails naming the symbol
};

// The choices of the on_unknown parameter.
extern const char* const unknown_policy_choices[];  // {"skip", "error", NULL}

// "skip" or "error"; anything else throws sdk::Error(INVALID_CONFIG).
UnknownPolicy parse_unknown_policy(std::string_view value);

struct EncoderOptions {
    UnknownPolicy on_unknown = UnknownPolicy::skip;
    bool add_boundaries = true;  // <bos> first and <eos> last, each if the vocabulary has it
};

// Receives one line per skipped symbol; empty when nobody listens.
using SkipReporter = std::function<void(const std::string& message)>;

// Names the symbols in messages: {"character", "the normalized text"} gives
// "character 'x' (U+0078) at position 4 of the normalized text".
struct SymbolNames {
    const char* symbol;
    const char* sequence;
};

// Throws sdk::Error(INVALID_ARGUMENT) for an unknown symbol under
// UnknownPolicy::error.
std::vector<int32_t> encode_symbols(const Vocabulary& vocabulary, std::u32string_view symbols,
                                    const EncoderOptions& options, const SymbolNames& names,
                                    const SkipReporter& report_skip);

}  // namespace cadenza::frontend
