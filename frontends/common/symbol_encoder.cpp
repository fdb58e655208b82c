#include "symbol_encoder.h"

#include "cadenza/sdk/plugin_error.hpp"
#include "utf8.h"

namespace cadenza::frontend {

const char* const unknown_policy_choices[] = {"skip", "error", nullptr};

UnknownPolicy parse_unknown_policy(std::string_view value) {
    if (value == "skip") return UnknownPolicy::skip;
    if (value == "error") return UnknownPolicy::error;
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        "on_unknown must be \"skip\" or \"error\", not \"" + std::string(value) + "\"");
}

std::vector<int32_t> encode_symbols(const Vocabulary& vocabulary, std::u32string_view symbols,
                                    const EncoderOptions& options, const SymbolNames& names,
                                    const SkipReporter& report_skip) {
    std::vector<int32_t> ids;
    ids.reserve(symbols.size() + 2);
    if (options.add_boundaries && vocabulary.bos_id() >= 0) ids.push_back(vocabulary.bos_id());
    for (size_t position = 0; position < symbols.size(); ++position) {
        const char32_t symbol = symbols[position];
        const int32_t id = vocabulary.find_code_point(symbol);
        if (id >= 0) {
            ids.push_back(id);
            continue;
        }
        const std::string described = std::string(names.symbol) + " " + describe_code_point(symbol) +
                                      " at position " + std::to_string(position) + " of " + names.sequence;
        if (options.on_unknown == UnknownPolicy::error)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                                described + " is not in vocabulary " + vocabulary.source() +
                                    " (on_unknown = \"error\")");
        if (vocabulary.unk_id() >= 0) ids.push_back(vocabulary.unk_id());
        if (report_skip)
            report_skip(described + (vocabulary.unk_id() >= 0 ? " is unknown, mapped to <unk>"
                                                               : " is unknown, dropped"));
    }
    if (options.add_boundaries && vocabulary.eos_id() >= 0) ids.push_back(vocabulary.eos_id());
    return ids;
}

}  // namespace cadenza::frontend
