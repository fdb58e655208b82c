#include "backbone_layout.h"

#include <string>

#include "error.h"

namespace cadenza::training {
namespace {

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

}  // namespace

std::vector<TokenSequence> apply_backbone_layout(const std::vector<TokenSequence>& sequences, int64_t corpus_vocab,
                                                 const BackboneLayout& layout) {
    if (layout.text_vocab <= 0 || layout.text_length <= 0)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the layout needs a positive text vocabulary and prompt length");
    auto clashes = [&](int64_t id) {
        return id >= 0 && (id < layout.text_vocab || (id >= layout.audio_offset && id < layout.audio_offset + corpus_vocab));
    };
    if (layout.audio_offset < layout.text_vocab)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the audio range starts at " + std::to_string(layout.audio_offset) +
                                                     ", inside the text range [0, " + std::to_string(layout.text_vocab) + ")");
    if (clashes(layout.audio_start) || clashes(layout.end) || (layout.end >= 0 && layout.end == layout.audio_start))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the audio start and end tokens must lie outside the text and audio ranges");

    uint64_t state = layout.seed ^ 0x7e57ULL;
    std::vector<TokenSequence> laid_out;
    laid_out.reserve(sequences.size());
    for (const TokenSequence& sequence : sequences) {
        TokenSequence out;
        for (int64_t i = 0; i < layout.text_length; ++i)
            out.tokens.push_back(static_cast<int32_t>(splitmix64(state) % static_cast<uint64_t>(layout.text_vocab)));
        if (layout.audio_start >= 0) out.tokens.push_back(static_cast<int32_t>(layout.audio_start));
        out.prompt_length = static_cast<int64_t>(out.tokens.size());
        for (size_t t = static_cast<size_t>(sequence.prompt_length); t < sequence.tokens.size(); ++t)
            out.tokens.push_back(static_cast<int32_t>(sequence.tokens[t] + layout.audio_offset));
        if (layout.end >= 0) out.tokens.push_back(static_cast<int32_t>(layout.end));
        laid_out.push_back(std::move(out));
    }
    return laid_out;
}

}  // namespace cadenza::training
