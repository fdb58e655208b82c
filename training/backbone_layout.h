// Puts a token corpus into a speech backbone's vocabulary layout: text ids
// as the prompt, then the audio start token; the corpus's tokens shifted into
// the audio range, then the end token. The synthetic corpus made this way
// trains a target that the engine drives exactly like a TTS model.
#pragma once

#include <cstdint>
#include <vector>

#include "token_corpus.h"

namespace cadenza::training {

struct BackboneLayout {
    int64_t text_vocab = 0;     // prompt ids are drawn from [0, text_vocab)
    int64_t text_length = 12;   // prompt ids per sequence
    int64_t audio_offset = 0;   // backbone id of corpus token 0
    int64_t audio_start = -1;   // appended to the prompt; -1: none
    int64_t end = -1;           // appended to the target; -1: none
    uint64_t seed = 0;          // of the prompt ids
};

// Replaces each sequence's prompt with random text ids (+ audio start) and
// shifts its target tokens by audio_offset (+ end). Throws cadenza::Error
// when the ranges overlap.
std::vector<TokenSequence> apply_backbone_layout(const std::vector<TokenSequence>& sequences, int64_t corpus_vocab,
                                                 const BackboneLayout& layout);

}  // namespace cadenza::training
